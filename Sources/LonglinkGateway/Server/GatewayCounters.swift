import LonglinkCore
import Synchronization

/// Process-wide counters every loop bumps with relaxed atomics: what `/metrics`, `inspect` and tests read.
public final class GatewayCounters: Sendable {
    /// Open connections.
    public let connections = Atomic<Int>(0)
    /// Connections accepted since start.
    public let accepted = Atomic<Int>(0)
    /// Connections refused at accept (limit reached).
    public let refused = Atomic<Int>(0)
    /// Active subscriptions.
    public let subscriptions = Atomic<Int>(0)
    /// Push frames queued to subscribers.
    public let pushes = Atomic<Int>(0)
    /// Bytes of push frames queued.
    public let pushedBytes = Atomic<Int>(0)
    /// Publishes the Store accepted.
    public let publishesApplied = Atomic<Int>(0)
    /// Publishes refused (illegal transition, unknown order, ...).
    public let publishesRefused = Atomic<Int>(0)
    /// Subscribers cut for being slow.
    public let slowDisconnects = Atomic<Int>(0)
    /// Records held back and coalesced for slow subscribers.
    public let coalescedRecords = Atomic<Int>(0)
    /// Connections that sent undecodable bytes.
    public let protocolErrors = Atomic<Int>(0)
    /// Subscribes answered with `recovered = true` after a resume.
    public let recoveries = Atomic<Int>(0)
    private let disconnects = Mutex<[UInt32: Int]>([:])

    public init() {}

    /// Counts a disconnect by its numbered reason.
    func recordDisconnect(_ code: DisconnectCode) {
        disconnects.withLock { $0[code.rawValue, default: 0] += 1 }
    }

    /// Disconnects so far, by numbered reason.
    public var disconnectsByCode: [DisconnectCode: Int] {
        disconnects.withLock { table in
            Dictionary(uniqueKeysWithValues: table.map { (DisconnectCode(rawValue: $0.key), $0.value) })
        }
    }
}
