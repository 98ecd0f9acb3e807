import Glibc
import LonglinkCore
import LonglinkLoop
import LonglinkTestSupport
import Synchronization

/// A value shared between the test thread and loop threads.
final class Shared<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    var value: Value { storage.withLock { $0 } }
    func update<R>(_ body: (inout Value) -> R) -> R { storage.withLock { body(&$0) } }
}

/// Runs `body` on a new thread (Foundation-free: a pthread with a global entry point).
func spawnThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, threadEntry, box)
    precondition(result == 0, "pthread_create failed: \(result)")
    return thread
}

private final class ThreadBody {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}

private func threadEntry(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    Unmanaged<ThreadBody>.fromOpaque(argument!).takeRetainedValue().body()
    return nil
}

/// A connected loopback TCP pair, both non-blocking: `client` from `LoopbackSocket.connect` (its receive buffer
/// set before the connect), `server` from `Socket.accept`.
func loopbackPair(clientReceiveBuffer: Int? = nil, serverSendBuffer: Int? = nil) throws -> (client: CInt, server: CInt) {
    let listener = try Socket.listen(host: "127.0.0.1", port: 0)
    defer { Socket.close(listener) }
    let client = try LoopbackSocket.connect(port: try Socket.localPort(listener), receiveBuffer: clientReceiveBuffer)
    try Socket.setNonBlocking(client)
    var pending = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
    guard poll(&pending, 1, 10_000) == 1, let server = try Socket.accept(listener) else {
        Socket.close(client)
        throw IOError(errno: ETIMEDOUT, function: "accept (test)")
    }
    if let serverSendBuffer { try Socket.setBufferSizes(server, send: serverSendBuffer) }
    return (client, server)
}
