/// An `OrderStore` in memory: the default for a single node and for tests, and the reference the other stores
/// are checked against. Nothing survives the process; each instance starts a new random epoch unless given one.
///
/// Like every store it is owned by one thread (the Store's writer) and is not `Sendable`.
/// Validation is `ChangeValidation`; this type only keeps data: per order a snapshot, the retained records
/// (a window over an array, trimmed to `StoreRetention.maxRecordsPerOrder` on apply) and the idempotency keys of
/// retained records.
public final class MemoryOrderStore: OrderStore {
    /// The epoch of this store's history.
    public let epoch: UInt32
    /// The state machines changes are validated against.
    public let catalog: StateMachineCatalog
    /// How much history is kept.
    public let retention: StoreRetention
    private let clock: any WallClock
    /// One table per line of the catalog that has orders, sorted by line; found by comparing names (a handful
    /// of lines). Tables are values mutated in place: one exclusive access per change.
    private var tables: [MemoryLineTable] = []
    private var closed = false
    /// The table the last change went to (changes come in runs of one line).
    private var lastTable = 0

    /// Creates an empty store.
    /// - Parameters:
    ///   - catalog: the state machines (default: the built-in lines).
    ///   - retention: history limits (default: `.standard`).
    ///   - epoch: the history generation (default: random, never 0).
    ///   - clock: the source of record timestamps (default: the system clock).
    public init(
        catalog: StateMachineCatalog = .builtIn,
        retention: StoreRetention = .standard,
        epoch: UInt32? = nil,
        clock: any WallClock = SystemWallClock()
    ) {
        self.catalog = catalog
        self.retention = retention
        self.epoch = epoch ?? UInt32.random(in: 1...UInt32.max)
        self.clock = clock
    }

    /// How many orders the store holds.
    public var orderCount: Int { tables.reduce(0) { $0 + $1.count } }

    public func apply(_ change: OrderChange) throws(StoreError) -> AppliedChange {
        try apply(change, nowMillis: clock.nowMillis())
    }

    private func apply(_ change: OrderChange, nowMillis: UInt64) throws(StoreError) -> AppliedChange {
        guard !closed else { throw .closed }
        let index = try tableIndex(change.line)
        return try tables[index].apply(
            change,
            epoch: epoch,
            nowMillis: nowMillis,
            keeping: retention.maxRecordsPerOrder
        )
    }

    public func applyBatch(_ changes: [OrderChange]) -> [Result<AppliedChange, StoreError>] {
        var results: [Result<AppliedChange, StoreError>] = []
        results.reserveCapacity(changes.count)
        applyBatch(changes, appendingTo: &results)
        return results
    }

    public func applyBatch(_ changes: [OrderChange], appendingTo results: inout [Result<AppliedChange, StoreError>]) {
        // A batch is stored at one instant: one clock read (timestamps still never go backwards per order).
        let now = clock.nowMillis()
        // Through the buffer's pointer: each change is borrowed where it lies, not copied out of the array.
        changes.withUnsafeBufferPointer { changes in
            guard var change = changes.baseAddress else { return }
            for _ in 0..<changes.count {
                do throws(StoreError) {
                    results.append(.success(try apply(change.pointee, nowMillis: now)))
                } catch {
                    results.append(.failure(error))
                }
                change += 1
            }
        }
    }

    public func snapshot(of line: BusinessLine, _ order: OrderID) throws(StoreError) -> OrderSnapshot? {
        guard !closed else { throw .closed }
        return table(line)?.order(order)?.snapshot
    }

    public func records(of line: BusinessLine, _ order: OrderID, after position: StreamPosition, limit: Int)
        throws(StoreError) -> HistoryRead
    {
        guard !closed else { throw .closed }
        let entry = table(line)?.order(order)
        let window = ChangeValidation.window(
            after: position,
            epoch: epoch,
            firstOffset: entry?.firstOffset,
            lastOffset: entry?.snapshot.position.offset,
            limit: limit
        )
        switch window {
        case .expired: return .expired
        case .upToDate: return .records([])
        case .from(let offset, let limit): return .records(entry?.records(from: offset, limit: limit) ?? [])
        }
    }

    public func retainedHistory(of line: BusinessLine, _ order: OrderID) throws(StoreError)
        -> (snapshot: OrderSnapshot, history: [OrderChangeRecord])?
    {
        guard !closed else { throw .closed }
        guard let entry = table(line)?.order(order) else { return nil }
        return (entry.snapshot, entry.history)
    }

    public func orders(after cursor: OrderCursor?, limit: Int) throws(StoreError) -> [OrderSnapshot] {
        guard !closed else { throw .closed }
        guard limit > 0 else { return [] }
        var result: [OrderSnapshot] = []
        for index in tables.indices {
            if let cursor, tables[index].line < cursor.line { continue }
            let after = cursor.flatMap { $0.line == tables[index].line ? $0.orderID : nil }
            tables[index].snapshots(after: after, limit: limit, into: &result)
            if result.count >= limit { break }
        }
        return result
    }

    public func applyCommittedBatch(_ records: [OrderChangeRecord]) -> [Result<AppliedChange, StoreError>] {
        records.map { record in
            Result { () throws(StoreError) in
                guard !closed else { throw .closed }
                let index = try tableIndex(record.line)
                return try tables[index].applyCommitted(record, epoch: epoch, keeping: retention.maxRecordsPerOrder)
            }
        }
    }

    @discardableResult
    public func importOrder(_ snapshot: OrderSnapshot, history: [OrderChangeRecord], policy: ImportPolicy)
        throws(StoreError) -> ImportOutcome
    {
        guard !closed else { throw .closed }
        let imported = try ChangeValidation.prepareImport(snapshot, history: history, catalog: catalog, epoch: epoch)
        let index = try tableIndex(snapshot.line)
        let stored = tables[index].order(snapshot.orderID).map { (snapshot: $0.snapshot, history: $0.history) }
        let outcome = try ChangeValidation.importOutcome(stored: stored, imported: imported, policy: policy)
        if outcome != .identical { tables[index].put(imported.snapshot, history: imported.history) }
        return outcome
    }

    public func expire(nowMillis: UInt64) throws(StoreError) -> Int {
        guard !closed else { throw .closed }
        var removed = 0
        for index in tables.indices {
            removed += tables[index].expire(nowMillis: nowMillis, retention: retention)
        }
        return removed
    }

    private func table(_ line: BusinessLine) -> MemoryLineTable? {
        for index in tables.indices where tables[index].line == line { return tables[index] }
        return nil
    }

    /// The index of `line`'s table, made on first use; `unknownLine` when the catalog has no such line.
    private func tableIndex(_ line: BusinessLine) throws(StoreError) -> Int {
        if lastTable < tables.count && tables[lastTable].line == line { return lastTable }
        for index in tables.indices where tables[index].line == line {
            lastTable = index
            return index
        }
        return try makeTable(line)
    }

    private func makeTable(_ line: BusinessLine) throws(StoreError) -> Int {
        for index in tables.indices where tables[index].line == line { return index }
        guard let machine = catalog.machine(for: line) else { throw .unknownLine(line.name) }
        tables.append(MemoryLineTable(machine: machine))
        tables.sort { $0.line < $1.line }
        for index in tables.indices where tables[index].line == line { return index }
        preconditionFailure("table of \(line) vanished")
    }

    /// Refuses further work. The tables stay until the store is freed: a process that exits right after
    /// (`serve`) leaves them to the kernel instead of freeing every record.
    public func shutdown() {
        closed = true
    }
}
