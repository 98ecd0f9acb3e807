import Foundation
import Glibc
import Synchronization

/// A loopback TCP proxy that behaves like a NAT with an idle timeout: a connection through it with no byte in either
/// direction for longer than `idleLimit` is forgotten silently. From then on it forwards nothing, drops what arrives,
/// and sends no FIN or RST to either side (the server's FIN is swallowed too); only the client closing its side ends
/// it. One thread, `poll(2)` with a 20 ms timeout; `stop()` ends everything.
public final class IdleDroppingProxy: Sendable {
    /// The port clients connect to (127.0.0.1).
    public let port: Int
    /// Connections accepted so far.
    public var accepted: Int { stats.withLock { $0.accepted } }
    /// Connections silently dropped so far.
    public var dropped: Int { stats.withLock { $0.dropped } }

    private struct Stats { var accepted = 0, dropped = 0 }
    private let listener: CInt
    private let upstreamPort: Int
    private let idleLimitMillis: UInt64
    private let stats = Mutex(Stats())
    private let stopping = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    /// Listens on a free loopback port and forwards to `127.0.0.1:upstreamPort`.
    public init(upstreamPort: Int, idleLimit: Duration) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        self.listener = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
        self.upstreamPort = upstreamPort
        let components = idleLimit.components
        self.idleLimitMillis = UInt64(components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000)
        let thread = Thread { [self] in run() }
        thread.start()
    }

    /// Stops the proxy and closes every socket (waits at most 2 s for its thread).
    public func stop() {
        stopping.store(true, ordering: .releasing)
        for _ in 0..<200 where !finished.load(ordering: .acquiring) { usleep(10_000) }
    }

    /// One proxied connection.
    private struct Pair {
        var client: CInt
        var server: CInt  // -1 once the server's side is closed (after a drop)
        var lastForwardMillis: UInt64
        var dead = false
    }

    private func run() {
        var pairs: [Pair] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !stopping.load(ordering: .acquiring) {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            for pair in pairs {
                fds.append(pollfd(fd: pair.client, events: Int16(POLLIN), revents: 0))
                fds.append(pollfd(fd: pair.server, events: Int16(POLLIN), revents: 0))  // poll ignores fd -1
            }
            guard poll(&fds, nfds_t(fds.count), 20) >= 0 else { continue }
            let polled = pairs.count
            if fds[0].revents & Int16(POLLIN) != 0 { acceptOne(into: &pairs) }
            var closed: [Int] = []
            for index in 0..<polled {
                let (clientEvents, serverEvents) = (fds[1 + 2 * index].revents, fds[2 + 2 * index].revents)
                if clientEvents != 0 && !forward(&pairs[index], fromClient: true, &buffer) { closed.append(index) }
                if serverEvents != 0 && !closed.contains(index) && !forward(&pairs[index], fromClient: false, &buffer) {
                    closed.append(index)
                }
            }
            for index in closed.reversed() {
                close(pairs[index].client)
                if pairs[index].server >= 0 { close(pairs[index].server) }
                pairs.remove(at: index)
            }
        }
        for pair in pairs {
            close(pair.client)
            if pair.server >= 0 { close(pair.server) }
        }
        close(listener)
        finished.store(true, ordering: .releasing)
    }

    private func acceptOne(into pairs: inout [Pair]) {
        let client = accept(listener, nil, nil)
        guard client >= 0 else { return }
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: upstreamPort)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard server >= 0, connected == 0 else {
            close(client)
            if server >= 0 { close(server) }
            return
        }
        stats.withLock { $0.accepted += 1 }
        pairs.append(Pair(client: client, server: server, lastForwardMillis: Self.nowMillis()))
    }

    /// Moves what one side sent to the other, unless the connection idled past the limit (then it is dead: bytes are
    /// dropped). Returns false when the pair is over (the client closed, or either side closed while alive).
    private func forward(_ pair: inout Pair, fromClient: Bool, _ buffer: inout [UInt8]) -> Bool {
        let source = fromClient ? pair.client : pair.server
        let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
        if count <= 0 {
            guard pair.dead && !fromClient else { return false }
            // The server gave up on the silent connection: a NAT that forgot the mapping forwards no FIN.
            close(pair.server)
            pair.server = -1
            return true
        }
        let now = Self.nowMillis()
        if !pair.dead && now - pair.lastForwardMillis > idleLimitMillis {
            pair.dead = true
            stats.withLock { $0.dropped += 1 }
        }
        if pair.dead { return true }
        let destination = fromClient ? pair.server : pair.client
        var offset = 0
        while offset < count {
            let written = buffer.withUnsafeBytes { write(destination, $0.baseAddress! + offset, count - offset) }
            guard written > 0 else { return false }
            offset += written
        }
        pair.lastForwardMillis = now
        return true
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return address
    }

    private static func nowMillis() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1000 + UInt64(spec.tv_nsec) / 1_000_000
    }
}
