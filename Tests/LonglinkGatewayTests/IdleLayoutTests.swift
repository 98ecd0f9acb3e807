import LonglinkGateway
import LonglinkTestSupport
import Testing

/// Every connection holds a `PeerStateMachine` inline in its `Connection`: its size is part of the idle memory per
/// connection, a budget (issue 19: ≤ 768 B of server RSS at 19,000 connections).
@Suite("Idle layout", .ownThreads)
struct IdleLayoutTests {
    @Test("a peer state machine takes at most 184 bytes")
    func peerSize() {
        #expect(MemoryLayout<PeerStateMachine>.size <= 184)
    }
}
