/// The storage of orders and their history, behind which memory, SQLite and Redis implementations sit.
///
/// Contract every implementation keeps (checked by `OrderStoreContract` in LonglinkTestSupport):
/// - `apply` is all-or-nothing. It validates the change against the line's state machine, then stores the
///   record and the new snapshot atomically, or throws a `StoreError` and writes nothing.
/// - An order is created by a change to its line's initial state; a change to an unknown order otherwise is
///   `unknownOrder`.
/// - Offsets start at 1 and strictly increase per order, without gaps, within one epoch.
/// - Applying a change whose non-empty idempotency key was applied before (to the same order) returns the
///   first record with `deduplicated = true`, the order's current snapshot, and stores nothing, when the change is
///   the same (target state and fields: `ChangeValidation.checkReplay`); a different change under a used key
///   throws `.idempotencyConflict` and stores nothing. A key is remembered as long as its record is retained.
/// - Validation and record building are `ChangeValidation.prepare`, shared by every implementation.
/// - When `apply` returns, the record is as durable as the implementation promises (SQLite: committed).
/// - `applyBatch` is `apply` for many changes in one transaction (group commit); each change still succeeds
///   or fails on its own, in order.
/// - `records(of:after:limit:)` answers `.expired` when the position is from another epoch or older than the
///   retained history, so a client learns it cannot recover instead of missing records silently
///   (`ChangeValidation.window` decides).
/// - History is trimmed to `StoreRetention.maxRecordsPerOrder` on apply; `expire` applies the age limit and
///   removes terminal orders past their TTL.
/// - `applyCommittedBatch` stores records another store committed exactly as committed (offsets, timestamps,
///   fields, idempotency keys; only the epoch becomes this store's), so a shadow store or a migration target
///   holds a faithful copy: `ChangeValidation.prepareCommitted` decides, and a record already held is a replay.
///
/// Feature toggles are not orders: they have their own seam, `ToggleStore`.
///
/// A store instance is owned by one thread, the Store's writer (see `StoreWriter`); it is not shared.
public protocol OrderStore: AnyObject {
    /// The epoch of this store's history (see `StreamPosition`).
    var epoch: UInt32 { get }

    /// The epoch of one order's history: `epoch`, unless the store keeps epochs per part of its data (a Redis
    /// Cluster keeps one per hash slot, so a shard that lost its data changes only its own). Positions of the order
    /// carry this epoch.
    func epoch(of line: BusinessLine, _ order: OrderID) -> UInt32

    /// Validates and records one change.
    func apply(_ change: OrderChange) throws(StoreError) -> AppliedChange

    /// Validates and records several changes in one transaction; one result per change, in order.
    func applyBatch(_ changes: [OrderChange]) -> [Result<AppliedChange, StoreError>]

    /// `applyBatch`, with the results appended to `results` (whose capacity the caller keeps between batches). The
    /// default appends what `applyBatch` returns; a store that can writes them there directly (the memory store:
    /// no array per batch on the gateway's commit path).
    func applyBatch(_ changes: [OrderChange], appendingTo results: inout [Result<AppliedChange, StoreError>])

    /// The order's current snapshot, or nil when it does not exist (or expired).
    func snapshot(of line: BusinessLine, _ order: OrderID) throws(StoreError) -> OrderSnapshot?

    /// The records after `position`, oldest first, at most `limit`.
    func records(of line: BusinessLine, _ order: OrderID, after position: StreamPosition, limit: Int)
        throws(StoreError) -> HistoryRead

    /// Every retained record of an order, oldest first, with its snapshot; nil when the order does not exist.
    /// A default implementation finds the first retained offset through `records(of:after:limit:)`; stores
    /// that know it directly should implement this.
    func retainedHistory(of line: BusinessLine, _ order: OrderID) throws(StoreError)
        -> (snapshot: OrderSnapshot, history: [OrderChangeRecord])?

    /// Orders in a stable order (line, then id) after `cursor`, at most `limit`: how migration walks a store.
    func orders(after cursor: OrderCursor?, limit: Int) throws(StoreError) -> [OrderSnapshot]

    /// Stores records another store committed, in order, as they were committed (see
    /// `ChangeValidation.prepareCommitted`): each the order's next record (or, at or before its current offset,
    /// the same record it holds: answered as a replay with `deduplicated = true`). One result per record; like
    /// `applyBatch`, one transaction where the store has them, history trimmed to the retained count.
    func applyCommittedBatch(_ records: [OrderChangeRecord]) -> [Result<AppliedChange, StoreError>]

    /// Writes an order's snapshot and retained history as given (offsets and timestamps kept, positions
    /// re-stamped into this store's epoch: see `ChangeValidation.prepareImport`). Used by `StoreMigration`;
    /// bypasses transition validation because the history was validated before.
    ///
    /// When the order already exists, `policy` decides (`ChangeValidation.importOutcome`, atomically with the
    /// write): identical data is a no-op; a stored earlier state is brought up to date with `.extend`; other
    /// differences throw `.conflict` unless `.replace`, which replaces the stored order and its idempotency keys.
    @discardableResult
    func importOrder(_ snapshot: OrderSnapshot, history: [OrderChangeRecord], policy: ImportPolicy)
        throws(StoreError) -> ImportOutcome

    /// Drops history beyond the retention limits and terminal orders past their expiry; returns how many
    /// orders were removed.
    func expire(nowMillis: UInt64) throws(StoreError) -> Int

    /// Flushes and closes. The store is unusable afterwards.
    func shutdown()
}

extension OrderStore {
    /// Appends what `applyBatch(_:)` returns.
    public func applyBatch(_ changes: [OrderChange], appendingTo results: inout [Result<AppliedChange, StoreError>]) {
        results.append(contentsOf: applyBatch(changes))
    }

    /// `epoch`: one epoch for every order.
    public func epoch(of line: BusinessLine, _ order: OrderID) -> UInt32 { epoch }

    /// Does nothing: stores without resources to release need not implement it.
    public func shutdown() {}

    /// Stores one record another store committed (see `applyCommittedBatch`).
    public func applyCommitted(_ record: OrderChangeRecord) throws(StoreError) -> AppliedChange {
        guard let result = applyCommittedBatch([record]).first else { throw .closed }
        return try result.get()
    }

    /// The default `retainedHistory`: a binary search for the oldest position that is not `.expired`, then one
    /// read of everything after it.
    public func retainedHistory(of line: BusinessLine, _ order: OrderID) throws(StoreError)
        -> (snapshot: OrderSnapshot, history: [OrderChangeRecord])?
    {
        guard let snapshot = try snapshot(of: line, order) else { return nil }
        let last = snapshot.position.offset
        var low: UInt64 = 0
        var high = last
        while low < high {
            let mid = low + (high - low) / 2
            if try records(of: line, order, after: StreamPosition(epoch: epoch, offset: mid), limit: 1) == .expired {
                low = mid + 1
            } else {
                high = mid
            }
        }
        let count = Int(clamping: last - low)
        switch try records(of: line, order, after: StreamPosition(epoch: epoch, offset: low), limit: max(1, count)) {
        case .records(let history): return (snapshot, history)
        case .expired: throw .storage("history of \(line)/\(order) changed while being read", retryable: true)
        }
    }

    /// Imports an order, refusing to replace different data (`.refuseDifferent`).
    @discardableResult
    public func importOrder(_ snapshot: OrderSnapshot, history: [OrderChangeRecord]) throws(StoreError)
        -> ImportOutcome
    {
        try importOrder(snapshot, history: history, policy: .refuseDifferent)
    }
}

/// A stored change: the record and whether it was a replay of an earlier idempotency key.
public struct AppliedChange: Hashable, Sendable {
    /// The record (the first one, when deduplicated).
    public var record: OrderChangeRecord
    /// The snapshot right after this record (for a deduplicated change: the order's current snapshot).
    public var snapshot: OrderSnapshot
    /// True when the idempotency key had been applied before and nothing new was stored.
    public var deduplicated: Bool

    public init(record: OrderChangeRecord, snapshot: OrderSnapshot, deduplicated: Bool) {
        self.record = record
        self.snapshot = snapshot
        self.deduplicated = deduplicated
    }
}

/// The answer to a history read.
public enum HistoryRead: Hashable, Sendable {
    /// Every record after the asked position (up to the limit), oldest first; empty when up to date.
    case records([OrderChangeRecord])
    /// The position is from another epoch or older than the retained history: the gap cannot be filled.
    case expired
}

/// Where a walk over all orders stands.
public struct OrderCursor: Hashable, Sendable {
    /// The last line visited.
    public var line: BusinessLine
    /// The last order visited.
    public var orderID: OrderID

    public init(line: BusinessLine, orderID: OrderID) {
        self.line = line
        self.orderID = orderID
    }
}

/// Why the Store refused a change or could not answer. `description` is the sentence a person reads (CLI, admin
/// API, the wire's error message); `debugDescription` adds the type and case for logs and test failures.
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The line's state machine does not allow `from → to`; `allowed` lists the states it does allow.
    case illegalTransition(line: BusinessLine, order: OrderID, from: OrderState?, to: OrderState, allowed: [OrderState])
    /// No such order (and the change does not create it).
    case unknownOrder(BusinessLine, OrderID)
    /// No state machine for this line.
    case unknownLine(String)
    /// The state is not part of the line's state machine.
    case unknownState(line: BusinessLine, state: OrderState)
    /// The idempotency key was applied before on this order for a different change (another target state or other
    /// fields): the request is refused instead of answering with the first result, which would not be what it asked.
    case idempotencyConflict(key: String, route: Route, storedState: OrderState)
    /// An import disagrees with stored data, or a snapshot does not belong to the change's order.
    case conflict(String)
    /// A field is invalid (payload too large, location out of range, ...).
    case invalidField(String)
    /// The backing storage failed (I/O error, disk full, read-only file, corrupt database, lost connection).
    /// `retryable` tells whether trying again may work.
    case storage(String, retryable: Bool)
    /// The store was shut down.
    case closed

    public var description: String {
        switch self {
        case .illegalTransition(let line, let order, let from, let to, let allowed):
            let origin = from.map { "'\($0)'" } ?? "no state (new order)"
            let next = allowed.isEmpty ? "none (terminal state)" : allowed.map(\.name).joined(separator: ", ")
            return "illegal transition for \(line) order \(order): \(origin) → '\(to)'; allowed next: \(next)"
        case .unknownOrder(let line, let order):
            return "unknown \(line) order \(order); create it with the line's initial state first"
        case .unknownLine(let line): return "unknown business line '\(line)'"
        case .unknownState(let line, let state): return "'\(state)' is not a state of line \(line)"
        case .idempotencyConflict(let key, let route, let stored):
            return "idempotency key '\(key)' was already used on \(route) for a different change (→ '\(stored)'); "
                + "nothing was stored: use a new key for a new change"
        case .conflict(let why): return "conflict: \(why)"
        case .invalidField(let why): return "invalid field: \(why)"
        case .storage(let why, let retryable):
            return "storage failure\(retryable ? " (retryable)" : ""): \(why)"
        case .closed: return "the store is closed"
        }
    }

    public var debugDescription: String { "StoreError(\(code)): \(description)" }

    /// The wire error code for this refusal.
    public var code: ErrorCode {
        switch self {
        case .illegalTransition: .illegalTransition
        case .unknownOrder: .unknownOrder
        case .unknownLine: .unknownLine
        case .unknownState: .unknownState
        case .idempotencyConflict: .idempotencyConflict
        case .conflict: .staleChange
        case .invalidField: .invalidField
        case .storage: .unavailable
        case .closed: .unavailable
        }
    }
}
