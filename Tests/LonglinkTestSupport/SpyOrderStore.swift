public import LonglinkCore
import Synchronization

/// What a `SpyOrderStore` saw, readable from any thread while the store lives on the writer thread.
public final class SpyCounters: Sendable {
    private struct State {
        var batchCalls = 0
        var batchSizes: [Int] = []
        var committed: Set<String> = []
        var shutdown = false
    }

    private let state = Mutex(State())

    public init() {}

    /// `applyBatch` calls (plain `apply` calls count as batches of one).
    public var batchCalls: Int { state.withLock { $0.batchCalls } }
    /// The size of each batch, in call order.
    public var batchSizes: [Int] { state.withLock { $0.batchSizes } }
    /// Whether `shutdown()` was called.
    public var isShutDown: Bool { state.withLock { $0.shutdown } }

    /// Whether the record was returned by a finished (durable) `apply`/`applyBatch`.
    public func isCommitted(_ record: OrderChangeRecord) -> Bool {
        state.withLock { $0.committed.contains(Self.key(record)) }
    }

    fileprivate func noteBatch(_ results: [Result<AppliedChange, StoreError>]) {
        state.withLock { state in
            state.batchCalls += 1
            state.batchSizes.append(results.count)
            for case .success(let applied) in results { state.committed.insert(Self.key(applied.record)) }
        }
    }

    fileprivate func noteShutdown() { state.withLock { $0.shutdown = true } }

    private static func key(_ record: OrderChangeRecord) -> String {
        "\(record.line)/\(record.orderID)@\(record.position.offset)"
    }
}

/// A decorator that forwards to `inner` and tells `counters` about batches, committed records and shutdown.
/// It does not forward `retainedHistory`, so it exercises the protocol's default implementation.
/// `alterCommitted` (optional) rewrites committed records before they reach `inner`: a way to plant a divergence in
/// a shadow store.
public final class SpyOrderStore: OrderStore {
    private let inner: any OrderStore
    private let counters: SpyCounters
    private let alterCommitted: (@Sendable (OrderChangeRecord) -> OrderChangeRecord)?

    public init(
        _ inner: any OrderStore,
        counters: SpyCounters,
        alterCommitted: (@Sendable (OrderChangeRecord) -> OrderChangeRecord)? = nil
    ) {
        self.inner = inner
        self.counters = counters
        self.alterCommitted = alterCommitted
    }

    public var epoch: UInt32 { inner.epoch }

    public func apply(_ change: OrderChange) throws(StoreError) -> AppliedChange {
        let result = Result { () throws(StoreError) in try inner.apply(change) }
        counters.noteBatch([result])
        return try result.get()
    }

    public func applyBatch(_ changes: [OrderChange]) -> [Result<AppliedChange, StoreError>] {
        let results = inner.applyBatch(changes)
        counters.noteBatch(results)
        return results
    }

    public func applyCommittedBatch(_ records: [OrderChangeRecord]) -> [Result<AppliedChange, StoreError>] {
        let results = inner.applyCommittedBatch(alterCommitted.map { records.map($0) } ?? records)
        counters.noteBatch(results)
        return results
    }

    public func snapshot(of line: BusinessLine, _ order: OrderID) throws(StoreError) -> OrderSnapshot? {
        try inner.snapshot(of: line, order)
    }

    public func records(of line: BusinessLine, _ order: OrderID, after position: StreamPosition, limit: Int)
        throws(StoreError) -> HistoryRead
    {
        try inner.records(of: line, order, after: position, limit: limit)
    }

    public func orders(after cursor: OrderCursor?, limit: Int) throws(StoreError) -> [OrderSnapshot] {
        try inner.orders(after: cursor, limit: limit)
    }

    @discardableResult
    public func importOrder(_ snapshot: OrderSnapshot, history: [OrderChangeRecord], policy: ImportPolicy)
        throws(StoreError) -> ImportOutcome
    {
        try inner.importOrder(snapshot, history: history, policy: policy)
    }

    public func expire(nowMillis: UInt64) throws(StoreError) -> Int { try inner.expire(nowMillis: nowMillis) }

    public func shutdown() {
        inner.shutdown()
        counters.noteShutdown()
    }
}

/// A store whose every call fails with `error`: a broken shadow or an unreachable backend.
public final class FailingOrderStore: OrderStore {
    private let error: StoreError

    public init(_ error: StoreError = .storage("injected failure", retryable: true)) { self.error = error }

    public var epoch: UInt32 { 1 }
    public func apply(_ change: OrderChange) throws(StoreError) -> AppliedChange { throw error }
    public func applyBatch(_ changes: [OrderChange]) -> [Result<AppliedChange, StoreError>] {
        changes.map { _ in .failure(error) }
    }
    public func snapshot(of line: BusinessLine, _ order: OrderID) throws(StoreError) -> OrderSnapshot? { throw error }
    public func records(of line: BusinessLine, _ order: OrderID, after position: StreamPosition, limit: Int)
        throws(StoreError) -> HistoryRead
    { throw error }
    public func orders(after cursor: OrderCursor?, limit: Int) throws(StoreError) -> [OrderSnapshot] { throw error }
    public func applyCommittedBatch(_ records: [OrderChangeRecord]) -> [Result<AppliedChange, StoreError>] {
        records.map { _ in .failure(error) }
    }
    public func importOrder(_ snapshot: OrderSnapshot, history: [OrderChangeRecord], policy: ImportPolicy)
        throws(StoreError) -> ImportOutcome
    {
        throw error
    }
    public func expire(nowMillis: UInt64) throws(StoreError) -> Int { throw error }
}
