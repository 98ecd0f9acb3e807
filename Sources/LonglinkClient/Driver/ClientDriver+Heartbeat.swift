import LonglinkCore
import Synchronization

/// Smart heartbeat in the driver: feeds `HeartbeatLearner` the session's events and carries out what it says
/// (ask the server for an interval, keep the learned value in the app's `HeartbeatStore`).
extension ClientDriver {
    /// The client counts the connection lost after this silence: the ping interval, the pong timeout and a margin
    /// of the pong timeout (at most 5 s) for the server's timer granularity.
    func setSilenceLimit(pingIntervalMillis: UInt64) {
        let pong = UInt64(sessionInfo?.pongTimeoutMillis ?? 10_000)
        serverSilenceLimitMillis = pingIntervalMillis + pong + min(pong, 5_000)
    }

    func heartbeatConnected(_ info: Connected) {
        guard var learner = heartbeatLearner else {
            publishHeartbeat(HeartbeatStatus(phase: .inactive, interval: .milliseconds(Int64(info.pingIntervalMillis)), learned: nil))
            return
        }
        let actions = learner.connected(info)
        heartbeatLearner = learner
        perform(actions)
    }

    func heartbeatPingArrived(idleMillis: UInt64) {
        guard var learner = heartbeatLearner else { return }
        let actions = learner.pingArrived(idleMillis: idleMillis)
        heartbeatLearner = learner
        perform(actions)
    }

    func heartbeatSilentlyDropped() {
        guard var learner = heartbeatLearner else { return }
        let before = learner.intervalMillis
        let actions = learner.silentlyDropped()
        heartbeatLearner = learner
        if !actions.isEmpty {
            shared.logger.info("silent drop at a \(before) ms ping interval; next connection asks for \(learner.intervalMillis) ms")
        }
        perform(actions)
    }

    /// `LonglinkClient.setNetwork(_:)`: learning restarts from the new network's remembered value.
    func networkChanged() {
        guard var learner = heartbeatLearner, let learning = learningSettings else { return }
        learner.switchNetwork(remembered: learning.store.learnedHeartbeat(forNetwork: learning.networkName))
        heartbeatLearner = learner
        if let sessionInfo, isConnected {
            heartbeatConnected(sessionInfo)
        } else {
            publishHeartbeat(learner.status)
        }
    }

    private func perform(_ actions: [HeartbeatLearner.Action]) {
        guard let learner = heartbeatLearner else { return }
        for action in actions {
            switch action {
            case .request(let intervalMillis):
                send(.heartbeat(HeartbeatRequest(requestID: session.makeRequestID(), pingIntervalMillis: UInt32(clamping: intervalMillis))))
                setSilenceLimit(pingIntervalMillis: intervalMillis)
            case .save(let learned):
                if let learning = learningSettings {
                    learning.store.saveLearnedHeartbeat(learned, forNetwork: learning.networkName)
                }
            }
        }
        if isConnected, learner.phase != .inactive { setSilenceLimit(pingIntervalMillis: learner.intervalMillis) }
        publishHeartbeat(learner.status)
    }

    private func publishHeartbeat(_ status: HeartbeatStatus) {
        shared.heartbeat.withLock { $0 = status }
    }

    private var learningSettings: HeartbeatLearning? { shared.configuration.withLock { $0.heartbeat } }
}
