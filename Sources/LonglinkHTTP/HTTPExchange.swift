import LonglinkLoop
import Synchronization

/// The answer side of one request, usable from any thread: respond once, or open a stream and send to it.
///
/// A handler that can answer at once returns its `HTTPResponse`; one that must wait (a Store read, every loop's
/// connection list) returns nil and later calls `respond` from wherever the answer arrives. Calls hop to the
/// server's loop through `EventLoop.execute`; late or repeated calls (the client left, the answer already went
/// out) are ignored. A stream (`startStream`, `send`, `finish`) is a chunked response that stays open:
/// Server-Sent Events use it.
///
/// `send` is bounded twice, so a slow stream reader never slows its producer: at most
/// `HTTPServer.Configuration.maxPendingStreamWrites` writes may wait for the loop, and at most
/// `maxStreamBacklogBytes` may wait for the socket; past either, the stream is cut (closed).
public struct HTTPExchange: Sendable {
    let loop: EventLoop
    let serverID: Int
    let connectionID: UInt64
    let serial: UInt64
    let state: HTTPExchangeState

    /// Sends the response (once). Callable from any thread.
    public func respond(_ response: HTTPResponse) {
        post { $0.complete(serial: serial, with: response) }
    }

    /// Starts a streamed (chunked) response with `head`'s status and headers; its body is ignored.
    public func startStream(_ head: HTTPResponse) {
        post { $0.startStream(serial: serial, head: head) }
    }

    /// Sends bytes on an open stream. Returns false, and cuts the stream, when the stream is closed or its reader
    /// has fallen too far behind.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        guard !state.closed.load(ordering: .acquiring) else { return false }
        let shared = self.state
        if shared.pending.load(ordering: .relaxed) >= shared.maxPending {
            shared.overflowed.store(true, ordering: .relaxed)
            let limit = shared.maxPending
            let current = self.serial
            post { $0.abort(serial: current, reason: "stream reader fell behind by \(limit) writes") }
            return false
        }
        shared.pending.add(1, ordering: .relaxed)
        let serverID = self.serverID
        let connectionID = self.connectionID
        let serial = self.serial
        let posted = loop.execute { context in
            shared.pending.subtract(1, ordering: .relaxed)
            HTTPServerDirectory.connection(on: context, server: serverID, id: connectionID)?
                .streamWrite(serial: serial, bytes: bytes)
        }
        if !posted { shared.markClosed() }
        return posted
    }

    /// Ends an open stream (the terminating chunk) and closes the connection.
    public func finish() {
        post { $0.finishStream(serial: serial) }
    }

    /// Closes the connection without a response (or cuts a stream).
    public func abort() {
        post { $0.abort(serial: serial, reason: "aborted by handler") }
    }

    /// True once the exchange is over: answered, stream finished or cut, or the client left.
    public var isClosed: Bool { state.closed.load(ordering: .acquiring) }

    /// True when the stream was cut because its reader fell behind.
    public var wasCut: Bool { state.overflowed.load(ordering: .relaxed) }

    /// Runs `handler` once when the exchange ends (at once if it already has), on whichever thread ends it.
    /// A stream's producer cancels itself here.
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        state.addCloseHandler(handler)
    }

    private func post(_ body: @escaping @Sendable (HTTPConnection) -> Void) {
        let serverID = self.serverID
        let connectionID = self.connectionID
        let posted = loop.execute { context in
            guard let connection = HTTPServerDirectory.connection(on: context, server: serverID, id: connectionID) else {
                return
            }
            body(connection)
        }
        if !posted { state.markClosed() }
    }
}

/// The thread-safe part of an exchange: whether it is over, its pending stream writes, and who to tell at the end.
final class HTTPExchangeState: Sendable {
    let closed = Atomic<Bool>(false)
    let overflowed = Atomic<Bool>(false)
    let pending = Atomic<Int>(0)
    let maxPending: Int
    private let closeHandlers = Mutex<[@Sendable () -> Void]>([])

    init(maxPending: Int) { self.maxPending = maxPending }

    func addCloseHandler(_ handler: @escaping @Sendable () -> Void) {
        let runNow = closeHandlers.withLock { handlers -> Bool in
            if closed.load(ordering: .acquiring) { return true }
            handlers.append(handler)
            return false
        }
        if runNow { handler() }
    }

    /// Marks the exchange over and runs the close handlers (once).
    func markClosed() {
        let handlers = closeHandlers.withLock { handlers -> [@Sendable () -> Void] in
            guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return [] }
            defer { handlers = [] }
            return handlers
        }
        for handler in handlers { handler() }
    }
}

/// The HTTP servers running on one loop, attached to its `LoopContext`, so exchange jobs find their connection.
final class HTTPServerDirectory {
    var servers: [Int: HTTPServer] = [:]

    static func on(_ context: LoopContext) -> HTTPServerDirectory {
        if let directory = context.attachment(HTTPServerDirectory.self) { return directory }
        let directory = HTTPServerDirectory()
        context.attach(directory)
        return directory
    }

    static func connection(on context: LoopContext, server: Int, id: UInt64) -> HTTPConnection? {
        context.attachment(HTTPServerDirectory.self)?.servers[server]?.connection(id)
    }
}

@available(*, unavailable)
extension HTTPServerDirectory: Sendable {}
