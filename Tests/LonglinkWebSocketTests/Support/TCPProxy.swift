import Foundation
import Glibc
import Synchronization

/// A loopback TCP proxy in front of a gateway port, for cutting connections mid-stream the way a dying network
/// or load balancer does: `cut()` ends every proxied connection at once (no WebSocket close frame, no Longlink
/// disconnect), `pause()` refuses new ones until `resume()`. Blocking sockets, two pump threads per connection.
final class TCPProxy: Sendable {
    private struct State {
        var connections: [CInt: CInt] = [:]
        var refusing = false
        var stopped = false
        var accepted = 0
    }

    /// The port browsers connect to.
    let port: Int
    private let listener: CInt
    private let upstreamPort: Int
    private let state = Mutex(State())

    init(upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        var bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if bound == 0 { bound = Glibc.listen(fd, 64) }
        guard bound == 0 else {
            Glibc.close(fd)
            throw GatewayProcessError(description: "proxy: bind/listen failed, errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit { stop() }

    /// Connections accepted so far (refused ones included).
    var acceptedCount: Int { state.withLock { $0.accepted } }

    /// Ends every proxied connection now.
    func cut() {
        // Under the lock: a pump that finished closes its fds under it too, so no fd here is stale.
        state.withLock { state in
            for (client, upstream) in state.connections {
                shutdown(client, Int32(SHUT_RDWR))
                shutdown(upstream, Int32(SHUT_RDWR))
            }
        }
    }

    /// New connections are closed at once until `resume()`.
    func pause() { state.withLock { $0.refusing = true } }

    func resume() { state.withLock { $0.refusing = false } }

    /// Stops accepting and cuts everything.
    func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        cut()
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                break
            }
            let (refusing, stopped) = state.withLock { state in
                state.accepted += 1
                return (state.refusing, state.stopped)
            }
            if stopped || refusing {
                Glibc.close(client)
                if stopped { break }
                continue
            }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: upstreamPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                Glibc.close(client)
                Glibc.close(upstream)
                continue
            }
            state.withLock { $0.connections[client] = upstream }
            let done = Mutex(0)
            let finish: @Sendable () -> Void = {
                let last = done.withLock { count -> Bool in
                    count += 1
                    return count == 2
                }
                shutdown(client, Int32(SHUT_RDWR))
                shutdown(upstream, Int32(SHUT_RDWR))
                guard last else { return }
                self.state.withLock { state in
                    state.connections.removeValue(forKey: client)
                    Glibc.close(client)
                    Glibc.close(upstream)
                }
            }
            Thread { Self.pump(from: client, to: upstream); finish() }.start()
            Thread { Self.pump(from: upstream, to: client); finish() }.start()
        }
        Glibc.close(listener)
    }

    private static func pump(from source: CInt, to target: CInt) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(source, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes { send(target, $0.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL)) }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
