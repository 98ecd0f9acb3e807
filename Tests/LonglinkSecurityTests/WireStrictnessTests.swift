import LonglinkCore
import LonglinkTestSupport
import Testing

/// Issue 14, item 5, at the gateway: a body varint above 2^64 − 1 is a protocol violation, not a smaller number.
@Suite("Wire strictness against a running gateway", .serialized, .ownThreads)
struct WireStrictnessTests {
    @Test("an ack whose offset is a ten-byte varint above 2^64 − 1 gets protocol_violation; other clients keep service")
    func ackAboveTwoToThe64() async throws {
        let fixture = try await HostileFixture()
        defer { fixture.stop() }
        let peer = try FramePeer(port: fixture.gateway.port(.plain))
        defer { peer.close() }
        #expect(try peer.handshake(token: fixture.gateway.token()) != nil)
        let route = Array("order://taxi/1".utf8)
        let ack = [0x0A, UInt8(route.count)] + route + [0x10] + [UInt8](repeating: 0xFF, count: 9) + [0x7F]
        let body = [0x62, UInt8(ack.count)] + ack  // ClientFrame.ack (12)
        try peer.sendRaw([UInt8(body.count)] + body)
        #expect(try peer.disconnect()?.code == .protocolViolation)
        #expect(try peer.closedByServer())
        #expect(try await fixture.serviceContinues())
    }
}
