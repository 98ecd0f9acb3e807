public import LonglinkCore

/// The heartbeat learning of `HeartbeatLearning` without I/O: events in (connected, a ping arrived after an idle
/// gap, the connection was silently dropped), the interval to ask the server for out. The driver feeds it; tests
/// drive it directly.
///
///     probing ──(pingsPerStep pings at the interval)──▶ probing at interval + step   (up to the server's maximum)
///        │                                                      │
///        └──(silent drop)──▶ settled at the last good interval ◀┘ (maximum reached)
///     settled ──(silent drop)──▶ settled one step shorter (not below the server's minimum)
public struct HeartbeatLearner: Sendable, Hashable {
    /// Where the learning is.
    public enum Phase: Sendable, Hashable {
        /// The server announced no bounds (or none yet): its own interval applies.
        case inactive
        /// Lengthening the interval while pings keep arriving.
        case probing
        /// Done: a longer interval failed, or the maximum was reached.
        case settled
    }

    /// What the driver should do.
    public enum Action: Sendable, Hashable {
        /// Ask the server for this interval (a `heartbeat` frame).
        case request(intervalMillis: UInt64)
        /// Keep this value for the network (`HeartbeatStore`).
        case save(LearnedHeartbeat)
    }

    /// How much longer each probe asks for (ms).
    public let stepMillis: UInt64
    /// Pings needed at an interval before the next step.
    public let pingsPerStep: Int
    /// Where the learning is.
    public private(set) var phase: Phase = .inactive
    /// The interval in use (asked for, or the server's when inactive); 0 before the first `connected`.
    public private(set) var intervalMillis: UInt64 = 0
    /// The longest interval known to work; nil until one did.
    public private(set) var learnedMillis: UInt64?
    /// The server's bounds, from the last `connected`.
    public private(set) var bounds: ClosedRange<UInt64>?
    private var remembered: LearnedHeartbeat?
    private var pingsAtInterval = 0

    /// A learner that resumes from `remembered` (what the store holds for the network), if anything.
    public init(step: Duration, pingsPerStep: Int, remembered: LearnedHeartbeat? = nil) {
        self.stepMillis = max(1, Self.millis(step))
        self.pingsPerStep = max(1, pingsPerStep)
        self.remembered = remembered
        self.learnedMillis = remembered.map { Self.millis($0.interval) }
    }

    /// The device moved to another network: learning starts again from what the store holds for it. The driver
    /// then feeds the current `connected` again, if any, to ask for the new network's interval.
    public mutating func switchNetwork(remembered: LearnedHeartbeat?) {
        self = HeartbeatLearner(step: .milliseconds(Int64(stepMillis)), pingsPerStep: pingsPerStep, remembered: remembered)
    }

    /// The interval to propose in `connect`: the remembered or current one; 0 (the server's default) when none.
    public var proposalMillis: UInt64 { intervalMillis > 0 ? intervalMillis : learnedMillis ?? 0 }

    /// The session opened: the server's interval and bounds. Returns a `request` when the learner wants another
    /// interval than the one the server chose.
    public mutating func connected(_ info: Connected) -> [Action] {
        guard info.acceptsPingIntervals else {
            phase = .inactive
            bounds = nil
            intervalMillis = UInt64(info.pingIntervalMillis)
            return []
        }
        let bounds = UInt64(info.minPingIntervalMillis)...UInt64(info.maxPingIntervalMillis)
        self.bounds = bounds
        pingsAtInterval = 0
        if phase == .inactive {
            // First session with bounds: resume from the store, or start at the shortest.
            if let remembered, let learned = learnedMillis {
                intervalMillis = learned.clamped(to: bounds)
                phase = remembered.settled || intervalMillis == bounds.upperBound ? .settled : .probing
            } else {
                intervalMillis = bounds.lowerBound
                phase = .probing
            }
        }
        intervalMillis = intervalMillis.clamped(to: bounds)
        return UInt64(info.pingIntervalMillis) == intervalMillis ? [] : [.request(intervalMillis: intervalMillis)]
    }

    /// A server ping arrived after `idleMillis` without traffic either way. A gap close to the interval shows the
    /// path kept it alive; after `pingsPerStep` of them the learner asks for a step more.
    public mutating func pingArrived(idleMillis: UInt64) -> [Action] {
        guard phase == .probing, let bounds, idleMillis >= intervalMillis - intervalMillis / 8 else { return [] }
        pingsAtInterval += 1
        guard pingsAtInterval >= pingsPerStep else { return [] }
        pingsAtInterval = 0
        learnedMillis = intervalMillis
        if intervalMillis >= bounds.upperBound {
            phase = .settled
            return [.save(learned)]
        }
        intervalMillis = min(intervalMillis + stepMillis, bounds.upperBound)
        return [.save(learned), .request(intervalMillis: intervalMillis)]
    }

    /// The connection went silent at the current interval (the server's ping never came): step back to the last
    /// good interval and stop probing, or, when already settled, one step shorter. The next `connect` proposes it.
    public mutating func silentlyDropped() -> [Action] {
        guard phase != .inactive, let bounds else { return [] }
        pingsAtInterval = 0
        if phase == .probing, let learned = learnedMillis, learned < intervalMillis {
            intervalMillis = learned
        } else {
            intervalMillis = (intervalMillis > stepMillis ? intervalMillis - stepMillis : 0).clamped(to: bounds)
        }
        learnedMillis = intervalMillis
        phase = .settled
        return [.save(learned)]
    }

    /// The value to keep for the network.
    public var learned: LearnedHeartbeat {
        LearnedHeartbeat(interval: .milliseconds(Int64(learnedMillis ?? intervalMillis)), settled: phase == .settled)
    }

    /// What the app sees (`LonglinkClient.heartbeat`).
    public var status: HeartbeatStatus {
        HeartbeatStatus(
            phase: phase,
            interval: .milliseconds(Int64(intervalMillis)),
            learned: learnedMillis.map { .milliseconds(Int64($0)) }
        )
    }

    private static func millis(_ duration: Duration) -> UInt64 {
        let components = duration.components
        return UInt64(max(0, components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000))
    }
}

/// The heartbeat as the app may show it: the interval in use and the longest one known to work.
public struct HeartbeatStatus: Sendable, Hashable, CustomStringConvertible {
    /// Probing, settled, or inactive (the server's fixed interval, or learning off).
    public var phase: HeartbeatLearner.Phase
    /// The ping interval in use (zero before the first connection).
    public var interval: Duration
    /// The longest interval known to keep the connection alive on this network; nil until one did.
    public var learned: Duration?

    public init(phase: HeartbeatLearner.Phase, interval: Duration, learned: Duration?) {
        self.phase = phase
        self.interval = interval
        self.learned = learned
    }

    public var description: String {
        let learnedText = learned.map { ", learned \(DurationText.text($0))" } ?? ""
        switch phase {
        case .inactive: return "heartbeat \(DurationText.text(interval)) (server's)"
        case .probing: return "heartbeat \(DurationText.text(interval)) (probing\(learnedText))"
        case .settled: return "heartbeat \(DurationText.text(interval)) (settled\(learnedText))"
        }
    }
}

extension UInt64 {
    fileprivate func clamped(to bounds: ClosedRange<UInt64>) -> UInt64 { Swift.min(Swift.max(self, bounds.lowerBound), bounds.upperBound) }
}
