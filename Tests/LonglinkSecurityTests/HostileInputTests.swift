import LonglinkTestSupport
import Foundation
import Glibc
import LonglinkClient
import LonglinkCore
import LonglinkGateway
import LonglinkLoop
import Testing

/// Each attack against a running gateway: answered with the right error or disconnect, only the attacker's
/// connection closed, the healthy subscriber served throughout, and no descriptor left behind.
@Suite("Hostile input against a running gateway", .serialized, .ownThreads)
struct HostileInputTests {
    /// Sends `bytes`, expects the numbered disconnect (one of `codes`) and the close, then checks service and fds.
    func attack(_ bytes: [UInt8], expect codes: [DisconnectCode], fixture: HostileFixture) async throws {
        let peer = try HostilePeer(port: fixture.gateway.port(.plain))
        try peer.sendRaw(bytes)
        let disconnect = try peer.disconnect()
        #expect(disconnect.map { codes.contains($0.code) } == true, "got \(String(describing: disconnect))")
        #expect(try peer.closedByServer())
        peer.close()
        #expect(try await fixture.serviceContinues())
    }

    @Test("random garbage, an oversized 2^63 length prefix and an 11-byte varint are protocol errors")
    func framing() async throws {
        let fixture = try await HostileFixture()
        defer { fixture.stop() }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            let garbage = (0..<Int.random(in: 1...4096, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Garbage may also look like a frame that never completes: bound that case with the handshake timeout.
            try await attack(garbage, expect: [.protocolViolation, .frameTooLarge, .handshakeTimeout], fixture: fixture)
        }
        try await attack([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01], expect: [.frameTooLarge], fixture: fixture)
        try await attack(Array(repeating: 0x80, count: 11) + [0x01], expect: [.protocolViolation], fixture: fixture)
        let leakFree = await fixture.noDescriptorLeak()
        #expect(leakFree, "gateway sockets \(fixture.gatewaySockets()), baseline \(fixture.baselineSockets), connections \(fixture.gateway.counters.connections)")
    }

    @Test("a frame of the wrong direction, an unknown frame kind and subscribe before connect are refused")
    func wrongFrames() async throws {
        let fixture = try await HostileFixture()
        defer { fixture.stop() }
        try await attack([2, 0x52, 0x00], expect: [.protocolViolation], fixture: fixture)  // ServerFrame.connected (10)
        try await attack([3, 0x9A, 0x06, 0x00], expect: [.protocolViolation], fixture: fixture)  // field 99
        let peer = try HostilePeer(port: fixture.gateway.port(.plain))
        try peer.send(.subscribe(SubscribeRequest(requestID: 5, route: "order://taxi/1")))
        #expect(try peer.error(for: 0)?.code == .badRequest)
        #expect(try peer.disconnect()?.code == .protocolViolation)
        #expect(try peer.closedByServer())
        #expect(try await fixture.serviceContinues())
        #expect(await fixture.noDescriptorLeak())
    }

    @Test("a frame that stops halfway, and a valid frame sent one byte per second, meet the handshake timeout")
    func slowPeers() async throws {
        let fixture = try await HostileFixture(handshakeMillis: 1_500)
        defer { fixture.stop() }
        let connect = try HostilePeer.bytes(.connect(ConnectRequest(token: fixture.gateway.token())))
        let half = try HostilePeer(port: fixture.gateway.port(.plain))
        try half.sendRaw(Array(connect.prefix(connect.count / 2)))
        let slow = try HostilePeer(port: fixture.gateway.port(.plain))
        for byte in connect.prefix(3) {
            do { try slow.sendRaw([byte]) } catch { break }  // the server may already have closed it
            try await Task.sleep(for: .seconds(1))
        }
        #expect(try half.disconnect()?.code == .handshakeTimeout)
        #expect(try slow.disconnect()?.code == .handshakeTimeout)
        #expect(try half.closedByServer() && slow.closedByServer())
        #expect(try await fixture.serviceContinues())
        #expect(await fixture.noDescriptorLeak())
    }

    @Test("half-open connections: a peer that shuts its side is closed; a silent connected peer hits the heartbeat timeout")
    func halfOpen() async throws {
        let fixture = try await HostileFixture(pingMillis: 300, pongMillis: 500)
        defer { fixture.stop() }
        let quitter = try HostilePeer(port: fixture.gateway.port(.plain))
        #expect(try quitter.handshake(token: fixture.gateway.token()) != nil)
        try Socket.shutdownWrite(quitter.fd)
        #expect(try quitter.closedByServer())
        let silent = try HostilePeer(port: fixture.gateway.port(.plain))
        #expect(try silent.handshake(token: fixture.gateway.token()) != nil)
        #expect(try silent.disconnect(timeout: .seconds(5))?.code == .heartbeatTimeout)
        #expect(try await fixture.serviceContinues())
        #expect(await fixture.noDescriptorLeak())
    }

    @Test("forged, expired and alg-none tokens are refused without harming others")
    func tokens() async throws {
        let fixture = try await HostileFixture()
        defer { fixture.stop() }
        let parts = fixture.gateway.token().split(separator: ".")
        let forged = "\(parts[0]).\(parts[1]).AAAA\(parts[2].dropFirst(4))"
        let none = "eyJhbGciOiJub25lIn0.\(parts[1])."
        for (token, code) in [(forged, DisconnectCode.invalidToken), (none, .invalidToken), (fixture.gateway.token(ttlSeconds: -5), .tokenExpired)] {
            try await attack(try HostilePeer.bytes(.connect(ConnectRequest(token: token))), expect: [code], fixture: fixture)
        }
        #expect(await fixture.noDescriptorLeak())
    }

    @Test("a flood of 2,000 connections: the healthy client keeps its pushes, and every descriptor is released")
    func flood() async throws {
        let fixture = try await HostileFixture(handshakeMillis: 20_000)
        defer { fixture.stop() }
        var flood: [CInt] = []
        defer { for fd in flood { Socket.close(fd) } }
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: fixture.gateway.port(.plain))
        let tlsAddress = try SocketAddress(ipAddress: "127.0.0.1", port: fixture.gateway.port(.tls))
        for index in 0..<2_000 {
            let (fd, _) = try Socket.connect(to: index % 2 == 0 ? address : tlsAddress)
            flood.append(fd)
            if index % 250 == 249 { #expect(try await fixture.serviceContinues()) }
        }
        #expect(await eventually(timeout: .seconds(20)) { fixture.gateway.counters.connections >= 2_001 })
        #expect(try await fixture.serviceContinues())
        for fd in flood { Socket.close(fd) }
        flood.removeAll()
        #expect(await eventually(timeout: .seconds(20)) { fixture.gateway.counters.connections == 1 })
        #expect(try await fixture.serviceContinues())
        #expect(await fixture.noDescriptorLeak())
    }
}
