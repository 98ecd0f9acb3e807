public import LonglinkCore
import Synchronization

/// Process-wide counters every loop bumps with relaxed atomics: what `/metrics`, `inspect` and tests read.
public final class GatewayCounters: Sendable {
    /// Open connections.
    let connections = Atomic<Int>(0)
    /// Connections accepted since start.
    let accepted = Atomic<Int>(0)
    /// Connections refused at accept (limit reached).
    let refused = Atomic<Int>(0)
    /// Active subscriptions.
    let subscriptions = Atomic<Int>(0)
    /// Push frames queued to subscribers.
    let pushes = Atomic<Int>(0)
    /// Bytes of push frames queued.
    let pushedBytes = Atomic<Int>(0)
    /// Publishes the Store accepted.
    let publishesApplied = Atomic<Int>(0)
    /// Publishes refused (illegal transition, unknown order, ...).
    let publishesRefused = Atomic<Int>(0)
    /// Subscribers cut for being slow.
    let slowDisconnects = Atomic<Int>(0)
    /// Records held back and coalesced for slow subscribers.
    let coalescedRecords = Atomic<Int>(0)
    /// Connections that sent undecodable bytes.
    let protocolErrors = Atomic<Int>(0)
    /// Subscribes answered with `recovered = true` after a resume.
    let recoveries = Atomic<Int>(0)
    /// Transport handshake steps postponed by the per-iteration handshake budget.
    let handshakesDeferred = Atomic<Int>(0)
    private let disconnects = Mutex<[UInt32: Int]>([:])

    public init() {}

    /// Counts a disconnect by its numbered reason.
    func recordDisconnect(_ code: DisconnectCode) {
        disconnects.withLock { $0[code.rawValue, default: 0] += 1 }
    }

    /// A consistent-enough copy of every counter (each read atomically).
    public var snapshot: GatewayStats {
        GatewayStats(
            connections: connections.load(ordering: .relaxed),
            accepted: accepted.load(ordering: .relaxed),
            refused: refused.load(ordering: .relaxed),
            subscriptions: subscriptions.load(ordering: .relaxed),
            pushes: pushes.load(ordering: .relaxed),
            pushedBytes: pushedBytes.load(ordering: .relaxed),
            publishesApplied: publishesApplied.load(ordering: .relaxed),
            publishesRefused: publishesRefused.load(ordering: .relaxed),
            slowDisconnects: slowDisconnects.load(ordering: .relaxed),
            coalescedRecords: coalescedRecords.load(ordering: .relaxed),
            protocolErrors: protocolErrors.load(ordering: .relaxed),
            recoveries: recoveries.load(ordering: .relaxed),
            disconnects: disconnectsByCode,
            handshakesDeferred: handshakesDeferred.load(ordering: .relaxed)
        )
    }

    /// Disconnects so far, by numbered reason.
    public var disconnectsByCode: [DisconnectCode: Int] {
        disconnects.withLock { table in
            Dictionary(uniqueKeysWithValues: table.map { (DisconnectCode(rawValue: $0.key), $0.value) })
        }
    }
}

/// A copy of the gateway's counters at one moment.
public struct GatewayStats: Sendable, Hashable {
    /// Open connections.
    public var connections: Int
    /// Connections accepted since start.
    public var accepted: Int
    /// Connections refused at accept.
    public var refused: Int
    /// Active subscriptions.
    public var subscriptions: Int
    /// Push frames queued.
    public var pushes: Int
    /// Push bytes queued.
    public var pushedBytes: Int
    /// Publishes accepted by the Store.
    public var publishesApplied: Int
    /// Publishes refused.
    public var publishesRefused: Int
    /// Slow subscribers cut.
    public var slowDisconnects: Int
    /// Records coalesced for slow subscribers.
    public var coalescedRecords: Int
    /// Connections that sent undecodable bytes.
    public var protocolErrors: Int
    /// Resumes answered with recovered = true.
    public var recoveries: Int
    /// Disconnects by numbered reason.
    public var disconnects: [DisconnectCode: Int]
    /// Handshake steps postponed by the handshake budget.
    public var handshakesDeferred: Int
}
