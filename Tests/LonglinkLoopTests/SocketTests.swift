import Glibc
import LonglinkLoop
import LonglinkTestSupport
import Testing

@Suite("Socket", .ownThreads)
struct SocketTests {
    @Test("a connect to a closed port fails with ECONNREFUSED named after connect")
    func connectRefused() throws {
        let listener = try Socket.listen(host: "127.0.0.1", port: 0)
        let port = try Socket.localPort(listener)
        Socket.close(listener)
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: port)

        let error = #expect(throws: IOError.self) {
            let (fd, connected) = try Socket.connect(to: address)
            defer { Socket.close(fd) }
            guard !connected else { return }
            var writable = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            #expect(poll(&writable, 1, 10_000) == 1)
            _ = try Socket.finishConnect(fd)
        }
        #expect(error?.errno == ECONNREFUSED)
        #expect(error?.function == "connect")
        #expect(error?.description.contains("connect") == true)
        #expect(error?.description.contains("Connection refused") == true)
    }

    @Test("binding a port in use without SO_REUSEPORT fails in bind with EADDRINUSE")
    func addressInUse() throws {
        let first = try Socket.listen(host: "127.0.0.1", port: 0)
        defer { Socket.close(first) }
        let error = #expect(throws: IOError.self) {
            Socket.close(try Socket.listen(host: "127.0.0.1", port: try Socket.localPort(first)))
        }
        #expect(error == IOError(errno: EADDRINUSE, function: "bind"))
    }

    @Test("SO_REUSEPORT lets one listener per loop share a port")
    func reusePort() throws {
        let first = try Socket.listen(host: "127.0.0.1", port: 0, reusePort: true)
        defer { Socket.close(first) }
        let port = try Socket.localPort(first)
        let second = try Socket.listen(host: "127.0.0.1", port: port, reusePort: true)
        defer { Socket.close(second) }
        #expect(try Socket.localPort(second) == port)
    }

    @Test("listenShared: its own sockets share one port; a port another socket listens on is refused, SO_REUSEPORT or not")
    func listenShared() throws {
        let group = try Socket.listenShared(host: "127.0.0.1", port: 0, count: 3)
        defer { for fd in group { Socket.close(fd) } }
        #expect(group.count == 3)
        let port = try Socket.localPort(group[0])
        #expect(try group.map { try Socket.localPort($0) } == [port, port, port])
        // Another "gateway" on that port: refused, although SO_REUSEPORT alone would have let it join.
        let error = #expect(throws: IOError.self) { _ = try Socket.listenShared(host: "127.0.0.1", port: port, count: 2) }
        #expect(error?.errno == EADDRINUSE)
        let joined = try Socket.listen(host: "127.0.0.1", port: port, reusePort: true)
        Socket.close(joined)  // (what the old per-loop binding did: it succeeds)
        // A plain listener is refused too.
        let plain = try Socket.listen(host: "127.0.0.1", port: 0)
        defer { Socket.close(plain) }
        #expect(throws: IOError.self) { _ = try Socket.listenShared(host: "127.0.0.1", port: try Socket.localPort(plain), count: 1) }
    }

    @Test("IPv6 loopback listens and connects when the host has IPv6")
    func ipv6() throws {
        guard let listener = try? Socket.listen(host: "::1", port: 0) else { return }  // no IPv6 on this host
        defer { Socket.close(listener) }
        let address = try Socket.localAddress(listener)
        #expect(address.host == "::1")
        #expect(address.description == "[::1]:\(address.port)")
        let (client, _) = try Socket.connect(to: address)
        Socket.close(client)
    }

    @Test("addresses parse, resolve and reject garbage")
    func addresses() throws {
        #expect(try SocketAddress(ipAddress: "localhost", port: 80).description == "127.0.0.1:80")
        #expect(try SocketAddress.resolve(host: "127.0.0.1", port: 9).first?.port == 9)
        let error = #expect(throws: IOError.self) { try SocketAddress(ipAddress: "not an address", port: 1) }
        #expect(error?.errno == EINVAL)
        #expect(throws: IOError.self) { try SocketAddress(ipAddress: "127.0.0.1", port: 70_000) }
    }
}
