import LonglinkClient
import LonglinkCore
import LonglinkTestSupport
import Testing

/// The smart-heartbeat learning, driven without sockets: bounds 1–5 s, steps of 1 s, one ping per step.
@Suite("HeartbeatLearner", .ownThreads)
struct HeartbeatLearnerTests {
    func info(interval: UInt32, min: UInt32 = 1_000, max: UInt32 = 5_000) -> Connected {
        Connected(
            clientID: "c1", nodeID: "n1", pingIntervalMillis: interval, pongTimeoutMillis: 500, maxFrameSize: 65_536,
            maxSubscriptions: 8, minPingIntervalMillis: min, maxPingIntervalMillis: max
        )
    }

    @Test("starts at the server's minimum and lengthens one step per surviving ping")
    func lengthens() {
        var learner = HeartbeatLearner(step: .seconds(1), pingsPerStep: 1)
        #expect(learner.proposalMillis == 0)
        #expect(learner.connected(info(interval: 2_500)) == [.request(intervalMillis: 1_000)])
        #expect(learner.phase == .probing)
        #expect(learner.pingArrived(idleMillis: 1_000) == [
            .save(LearnedHeartbeat(interval: .seconds(1), settled: false)), .request(intervalMillis: 2_000),
        ])
        #expect(learner.pingArrived(idleMillis: 2_010).last == .request(intervalMillis: 3_000))
        #expect(learner.learnedMillis == 2_000)
        #expect(learner.intervalMillis == 3_000)
    }

    @Test("a ping after a short gap (other traffic) proves nothing")
    func shortGapIgnored() {
        var learner = HeartbeatLearner(step: .seconds(1), pingsPerStep: 1)
        _ = learner.connected(info(interval: 1_000))
        #expect(learner.pingArrived(idleMillis: 300).isEmpty)
        #expect(learner.intervalMillis == 1_000)
        #expect(learner.learnedMillis == nil)
    }

    @Test("needs pingsPerStep pings before a step")
    func pingsPerStep() {
        var learner = HeartbeatLearner(step: .seconds(1), pingsPerStep: 3)
        _ = learner.connected(info(interval: 1_000))
        #expect(learner.pingArrived(idleMillis: 1_000).isEmpty)
        #expect(learner.pingArrived(idleMillis: 1_000).isEmpty)
        #expect(learner.pingArrived(idleMillis: 1_000).last == .request(intervalMillis: 2_000))
    }

    @Test("a silent drop while probing steps back to the last good interval and settles there")
    func stepsBack() {
        var learner = HeartbeatLearner(step: .seconds(1), pingsPerStep: 1)
        _ = learner.connected(info(interval: 1_000))
        _ = learner.pingArrived(idleMillis: 1_000)
        _ = learner.pingArrived(idleMillis: 2_000)
        #expect(learner.intervalMillis == 3_000)
        #expect(learner.silentlyDropped() == [.save(LearnedHeartbeat(interval: .seconds(2), settled: true))])
        #expect(learner.phase == .settled)
        #expect(learner.proposalMillis == 2_000)
        // The next connection gets the learned interval and asks for nothing more.
        #expect(learner.connected(info(interval: 2_000)).isEmpty)
        #expect(learner.pingArrived(idleMillis: 2_000).isEmpty)
        #expect(learner.intervalMillis == 2_000)
    }

    @Test("a silent drop when settled steps one further back, not below the minimum")
    func settledStepsBack() {
        var learner = HeartbeatLearner(step: .seconds(1), pingsPerStep: 1, remembered: LearnedHeartbeat(interval: .seconds(2), settled: true))
        #expect(learner.proposalMillis == 2_000)
        #expect(learner.connected(info(interval: 2_000)).isEmpty)
        #expect(learner.phase == .settled)
        _ = learner.silentlyDropped()
        #expect(learner.intervalMillis == 1_000)
        _ = learner.silentlyDropped()
        #expect(learner.intervalMillis == 1_000)
    }

    @Test("stops at the server's maximum")
    func maximum() {
        var learner = HeartbeatLearner(step: .seconds(3), pingsPerStep: 1, remembered: LearnedHeartbeat(interval: .seconds(4), settled: false))
        #expect(learner.connected(info(interval: 4_000)).isEmpty)
        #expect(learner.pingArrived(idleMillis: 4_000).last == .request(intervalMillis: 5_000))
        #expect(learner.pingArrived(idleMillis: 5_000) == [.save(LearnedHeartbeat(interval: .seconds(5), settled: true))])
        #expect(learner.phase == .settled)
    }

    @Test("a remembered value outside new bounds is clamped; a server without bounds leaves it inactive")
    func boundsAndInactive() {
        var learner = HeartbeatLearner(step: .seconds(1), pingsPerStep: 1, remembered: LearnedHeartbeat(interval: .seconds(9), settled: true))
        #expect(learner.connected(info(interval: 2_000)) == [.request(intervalMillis: 5_000)])
        var fixed = HeartbeatLearner(step: .seconds(1), pingsPerStep: 1)
        #expect(fixed.connected(info(interval: 25_000, min: 0, max: 0)).isEmpty)
        #expect(fixed.phase == .inactive)
        #expect(fixed.pingArrived(idleMillis: 25_000).isEmpty)
        #expect(fixed.silentlyDropped().isEmpty)
        #expect("\(fixed.status)" == "heartbeat 25 s (server's)")
    }

    @Test("switching networks starts again from the new network's remembered value")
    func switchNetwork() {
        var learner = HeartbeatLearner(step: .seconds(1), pingsPerStep: 1)
        _ = learner.connected(info(interval: 1_000))
        _ = learner.pingArrived(idleMillis: 1_000)
        learner.switchNetwork(remembered: LearnedHeartbeat(interval: .seconds(3), settled: true))
        #expect(learner.phase == .inactive)
        #expect(learner.proposalMillis == 3_000)
        #expect(learner.connected(info(interval: 2_000)) == [.request(intervalMillis: 3_000)])
        #expect(learner.phase == .settled)
        learner.switchNetwork(remembered: nil)
        #expect(learner.connected(info(interval: 3_000)) == [.request(intervalMillis: 1_000)])
        #expect(learner.phase == .probing)
    }

    @Test("the memory store keeps values per network name")
    func memoryStore() {
        let store = MemoryHeartbeatStore()
        store.saveLearnedHeartbeat(LearnedHeartbeat(interval: .seconds(90), settled: true), forNetwork: "wifi:home")
        #expect(store.learnedHeartbeat(forNetwork: "wifi:home") == LearnedHeartbeat(interval: .seconds(90), settled: true))
        #expect(store.learnedHeartbeat(forNetwork: "cellular") == nil)
    }
}
