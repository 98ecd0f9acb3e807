import Synchronization

/// What the client learned about one network's idle timeout: the longest ping interval known to keep the connection
/// alive there, and whether learning is over (a longer interval was tried and silently dropped, or the server's
/// maximum was reached).
public struct LearnedHeartbeat: Sendable, Hashable, CustomStringConvertible {
    /// The longest interval that kept the connection alive.
    public var interval: Duration
    /// True once a longer interval failed (or the server's maximum was reached): the client stops probing.
    public var settled: Bool

    public init(interval: Duration, settled: Bool) {
        self.interval = interval
        self.settled = settled
    }

    public var description: String { "\(DurationText.text(interval))\(settled ? " (settled)" : " (still probing)")" }
}

/// Where learned heartbeat intervals are kept, per network name. `MemoryHeartbeatStore` keeps them for the process's
/// life; an app that wants them across launches implements this (e.g. over `UserDefaults` or a file). Both methods
/// are called on the client's loop thread, only when a value changes or a connection opens: keep them quick.
public protocol HeartbeatStore: Sendable {
    /// The value learned for `network`, or nil when none is known.
    func learnedHeartbeat(forNetwork network: String) -> LearnedHeartbeat?
    /// Keeps `learned` for `network`.
    func saveLearnedHeartbeat(_ learned: LearnedHeartbeat, forNetwork network: String)
}

/// The default `HeartbeatStore`: a dictionary in memory (lost when the process ends).
public final class MemoryHeartbeatStore: HeartbeatStore {
    private let values = Mutex<[String: LearnedHeartbeat]>([:])

    public init() {}

    public func learnedHeartbeat(forNetwork network: String) -> LearnedHeartbeat? {
        values.withLock { $0[network] }
    }

    public func saveLearnedHeartbeat(_ learned: LearnedHeartbeat, forNetwork network: String) {
        values.withLock { $0[network] = learned }
    }
}

/// A `HeartbeatStore` from two closures, for apps that persist elsewhere without writing a type.
public struct ClosureHeartbeatStore: HeartbeatStore {
    private let load: @Sendable (String) -> LearnedHeartbeat?
    private let save: @Sendable (LearnedHeartbeat, String) -> Void

    public init(
        load: @escaping @Sendable (_ network: String) -> LearnedHeartbeat?,
        save: @escaping @Sendable (_ learned: LearnedHeartbeat, _ network: String) -> Void
    ) {
        self.load = load
        self.save = save
    }

    public func learnedHeartbeat(forNetwork network: String) -> LearnedHeartbeat? { load(network) }
    public func saveLearnedHeartbeat(_ learned: LearnedHeartbeat, forNetwork network: String) { save(learned, network) }
}
