import LonglinkCore
import LonglinkGateway
import LonglinkTestSupport
import Testing

/// The server side of smart heartbeat: a client's proposed ping interval, within the announced bounds, drives the
/// connection's ping schedule and silence timeout; outside them it is clamped (connect) or refused (heartbeat).
@Suite("PeerStateMachine heartbeat intervals", .ownThreads)
struct PeerHeartbeatIntervalTests {
    let settings = PeerSettings(
        nodeID: "node-1",
        pingIntervalMillis: 2_000,
        pongTimeoutMillis: 500,
        minPingIntervalMillis: 1_000,
        maxPingIntervalMillis: 5_000,
        handshakeTimeoutMillis: 2_000
    )

    func connect(proposing millis: UInt32, settings: PeerSettings? = nil) -> (PeerStateMachine, Connected?) {
        var peer = PeerStateMachine(clientID: "c1", settings: settings ?? self.settings, authorizer: TableAuthorizer(), nowMillis: 0)
        peer.transportReady(nowMillis: 0)
        let actions = peer.receive(.connect(ConnectRequest(token: "admin", pingIntervalMillis: millis)), nowMillis: 0)
        guard case .send(.connected(let connected)) = actions.first else { return (peer, nil) }
        return (peer, connected)
    }

    func closeCode(_ actions: [PeerAction]) -> DisconnectCode? {
        for case .close(let disconnect) in actions { return disconnect.code }
        return nil
    }

    @Test("connected announces the bounds; a proposal inside them is the connection's interval")
    func proposalWithinBounds() {
        var (peer, connected) = connect(proposing: 3_000)
        #expect(connected?.pingIntervalMillis == 3_000)
        #expect(connected?.minPingIntervalMillis == 1_000)
        #expect(connected?.maxPingIntervalMillis == 5_000)
        #expect(peer.pingIntervalMillis == 3_000)
        #expect(peer.tick(nowMillis: 2_500).isEmpty)  // the default (2 s) no longer applies
        #expect(peer.tick(nowMillis: 3_000) == [.send(.ping)])
        #expect(peer.receive(.pong, nowMillis: 3_010).isEmpty)
        #expect(closeCode(peer.tick(nowMillis: 6_500)) == nil)
        #expect(closeCode(peer.tick(nowMillis: 6_510)) == .heartbeatTimeout)  // 3 s + 0.5 s after the last frame
    }

    @Test("a proposal outside the bounds is clamped, and connected says so; none gets the default")
    func proposalClamped() {
        #expect(connect(proposing: 60_000).1?.pingIntervalMillis == 5_000)
        #expect(connect(proposing: 10).1?.pingIntervalMillis == 1_000)
        #expect(connect(proposing: 0).1?.pingIntervalMillis == 2_000)
    }

    @Test("a heartbeat request inside the bounds changes the schedule from the previous ping on")
    func heartbeatRequestAccepted() {
        var (peer, _) = connect(proposing: 0)
        #expect(peer.receive(.heartbeat(HeartbeatRequest(requestID: 7, pingIntervalMillis: 4_000)), nowMillis: 100).isEmpty)
        #expect(peer.pingIntervalMillis == 4_000)
        #expect(peer.tick(nowMillis: 3_900).isEmpty)
        #expect(peer.tick(nowMillis: 4_000) == [.send(.ping)])
    }

    @Test("a heartbeat request outside the bounds is refused with invalid_field and changes nothing")
    func heartbeatRequestRefused() {
        var (peer, _) = connect(proposing: 0)
        let actions = peer.receive(.heartbeat(HeartbeatRequest(requestID: 9, pingIntervalMillis: 6_000)), nowMillis: 100)
        guard case .send(.error(let error)) = actions.first else {
            Issue.record("expected an error, got \(actions)")
            return
        }
        #expect(error.requestID == 9)
        #expect(error.code == .invalidField)
        #expect(error.message.contains("1000–5000 ms"))
        #expect(peer.pingIntervalMillis == 2_000)
        #expect(peer.phase == .active)
    }

    @Test("with a fixed interval the bounds are 0, proposals are ignored and requests refused")
    func fixedInterval() {
        let fixed = PeerSettings(nodeID: "node-1", pingIntervalMillis: 2_000, pongTimeoutMillis: 500)
        var (peer, connected) = connect(proposing: 4_000, settings: fixed)
        #expect(connected?.pingIntervalMillis == 2_000)
        #expect(connected?.maxPingIntervalMillis == 0)
        let actions = peer.receive(.heartbeat(HeartbeatRequest(requestID: 3, pingIntervalMillis: 3_000)), nowMillis: 1)
        guard case .send(.error(let error)) = actions.first else {
            Issue.record("expected an error, got \(actions)")
            return
        }
        #expect(error.code == .invalidField)
        #expect(peer.pingIntervalMillis == 2_000)
    }
}
