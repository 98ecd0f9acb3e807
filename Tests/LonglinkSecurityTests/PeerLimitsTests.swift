import LonglinkTestSupport
import LonglinkCore
import LonglinkGateway
import Testing

/// `PeerStateMachine`'s security limits without sockets.
@Suite("Peer limits (sans I/O)", .ownThreads)
struct PeerLimitsTests {
    struct Everyone: Authorizer {
        func authenticate(token: String, nowMillis: UInt64) throws(AuthorizationError) -> Principal {
            Principal(userID: "u", role: .publisher, routes: [.all])
        }
    }

    @Test("the handshake timeout bounds the whole unauthenticated time, transport handshake included")
    func unauthenticatedTime() {
        var peer = PeerStateMachine(clientID: "c", settings: PeerSettings(nodeID: "n", handshakeTimeoutMillis: 1_000), authorizer: Everyone(), nowMillis: 10_000)
        #expect(peer.tick(nowMillis: 10_500).isEmpty)
        peer.transportReady(nowMillis: 10_900)  // a slow TLS handshake
        let actions = peer.tick(nowMillis: 11_000)
        #expect(actions.contains { if case .close(let d) = $0 { d.code == .handshakeTimeout } else { false } })
    }

    @Test("publishes are refused with rate_limited past the burst and admitted again as the bucket refills")
    func publishBucket() {
        var peer = PeerStateMachine(
            clientID: "c",
            settings: PeerSettings(nodeID: "n", publishesPerSecond: 2, publishBurst: 2),
            authorizer: Everyone(),
            nowMillis: 0
        )
        peer.transportReady(nowMillis: 0)
        _ = peer.receive(.connect(ConnectRequest(token: "t")), nowMillis: 0)
        func publish(_ id: UInt32, at now: UInt64) -> Bool {
            let actions = peer.receive(.publish(PublishRequest(requestID: id, orderID: "o\(id)", line: "taxi", targetState: "created")), nowMillis: now)
            if actions.contains(where: { if case .publish = $0 { true } else { false } }) { return true }
            #expect(actions.contains { action in
                if case .send(.publishResult(let r)) = action, case .refused(let e) = r.outcome { return e.code == .rateLimited }
                return false
            })
            return false
        }
        #expect(publish(1, at: 0) && publish(2, at: 0))
        #expect(!publish(3, at: 100))
        #expect(publish(4, at: 600))  // 0.5 s at 2/s refilled one token
        #expect(!publish(5, at: 600))
        #expect(peer.phase == .active)
    }
}
