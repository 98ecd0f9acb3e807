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
    /// One table per line, sorted by line; found by comparing names (a handful of lines), so an order lookup
    /// hashes only its id.
    private var tables: [LineTable] = []
    private var closed = false
    /// Feature toggles by route (see `MemoryOrderStore+Toggles.swift`).
    var toggleTable: [Route: FeatureToggle] = [:]

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
    public var orderCount: Int { tables.reduce(0) { $0 + $1.entries.count } }

    public func apply(_ change: OrderChange) throws(StoreError) -> AppliedChange {
        guard !closed else { throw .closed }
        let table = self.table(change.line)
        let entry = table?.entries[change.orderID]
        if let entry, !change.idempotencyKey.isEmpty, let offset = entry.keys[change.idempotencyKey],
            let first = entry.record(at: offset)
        {
            return AppliedChange(record: first, snapshot: entry.snapshot, deduplicated: true)
        }
        let prepared = try ChangeValidation.prepare(
            change,
            current: entry?.snapshot,
            catalog: catalog,
            epoch: epoch,
            nowMillis: clock.nowMillis()
        )
        if let entry {
            entry.append(prepared.record, snapshot: prepared.snapshot)
            entry.trim(toCount: retention.maxRecordsPerOrder)
        } else {
            let table = table ?? makeTable(change.line)
            table.entries[change.orderID] = Entry(
                first: prepared.record,
                snapshot: prepared.snapshot,
                retention: retention
            )
            table.sortedIDs = nil
        }
        return AppliedChange(record: prepared.record, snapshot: prepared.snapshot, deduplicated: false)
    }

    public func applyBatch(_ changes: [OrderChange]) -> [Result<AppliedChange, StoreError>] {
        changes.map { change in Result { () throws(StoreError) in try apply(change) } }
    }

    public func snapshot(of line: BusinessLine, _ order: OrderID) throws(StoreError) -> OrderSnapshot? {
        guard !closed else { throw .closed }
        return table(line)?.entries[order]?.snapshot
    }

    public func records(of line: BusinessLine, _ order: OrderID, after position: StreamPosition, limit: Int)
        throws(StoreError) -> HistoryRead
    {
        guard !closed else { throw .closed }
        let entry = table(line)?.entries[order]
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
        guard let entry = table(line)?.entries[order] else { return nil }
        return (entry.snapshot, entry.history)
    }

    public func orders(after cursor: OrderCursor?, limit: Int) throws(StoreError) -> [OrderSnapshot] {
        guard !closed else { throw .closed }
        guard limit > 0 else { return [] }
        var result: [OrderSnapshot] = []
        for table in tables {
            if let cursor, table.line < cursor.line { continue }
            let ids = table.sortedIDs ?? table.entries.keys.sorted()
            table.sortedIDs = ids
            var low = 0
            if let cursor, cursor.line == table.line {
                var high = ids.count
                while low < high {
                    let mid = (low + high) / 2
                    if ids[mid] <= cursor.orderID { low = mid + 1 } else { high = mid }
                }
            }
            for id in ids[low...] {
                guard result.count < limit else { return result }
                if let entry = table.entries[id] { result.append(entry.snapshot) }
            }
        }
        return result
    }

    public func importOrder(_ snapshot: OrderSnapshot, history: [OrderChangeRecord], replace: Bool)
        throws(StoreError)
    {
        guard !closed else { throw .closed }
        let imported = try ChangeValidation.prepareImport(snapshot, history: history, catalog: catalog, epoch: epoch)
        let table = self.table(snapshot.line) ?? makeTable(snapshot.line)
        if let existing = table.entries[snapshot.orderID] {
            if ChangeValidation.isSameOrder((existing.snapshot, existing.history), imported) { return }
            guard replace else {
                throw .conflict("\(snapshot.line)/\(snapshot.orderID) exists with different data")
            }
        } else {
            table.sortedIDs = nil
        }
        table.entries[snapshot.orderID] = Entry(snapshot: imported.snapshot, history: imported.history)
    }

    public func expire(nowMillis: UInt64) throws(StoreError) -> Int {
        guard !closed else { throw .closed }
        var removed = 0
        for table in tables {
            var gone: [OrderID] = []
            for (id, entry) in table.entries {
                let updated = entry.snapshot.updatedAtMillis
                let idle = nowMillis >= updated ? nowMillis - updated : 0
                if idle >= retention.terminalOrderTTLMillis
                    && ChangeValidation.isTerminal(entry.snapshot, catalog: catalog)
                {
                    gone.append(id)
                } else {
                    entry.trim(olderThan: nowMillis, maxAgeMillis: retention.maxHistoryAgeMillis)
                }
            }
            for id in gone { table.entries[id] = nil }
            if !gone.isEmpty { table.sortedIDs = nil }
            removed += gone.count
        }
        return removed
    }

    private func table(_ line: BusinessLine) -> LineTable? {
        for table in tables where table.line == line { return table }
        return nil
    }

    private func makeTable(_ line: BusinessLine) -> LineTable {
        let table = LineTable(line)
        tables.append(table)
        tables.sort { $0.line < $1.line }
        return table
    }

    public func shutdown() {
        closed = true
        tables = []
    }
}

/// The orders of one business line.
private final class LineTable {
    let line: BusinessLine
    var entries: [OrderID: Entry] = [:]
    /// Ids in order for `orders(after:limit:)`; nil after an order was added or removed.
    var sortedIDs: [OrderID]?

    init(_ line: BusinessLine) { self.line = line }
}

/// One order in a `MemoryOrderStore`: snapshot, retained records (`storage[head...]`) and idempotency keys.
private final class Entry {
    var snapshot: OrderSnapshot
    private var storage: [OrderChangeRecord]
    private var head = 0
    /// Idempotency key → offset of its record, for retained records.
    private(set) var keys: [String: UInt64] = [:]

    /// A new order: room for its first few records without regrowing.
    init(first record: OrderChangeRecord, snapshot: OrderSnapshot, retention: StoreRetention) {
        self.snapshot = snapshot
        self.storage = []
        storage.reserveCapacity(min(8, max(1, retention.maxRecordsPerOrder)))
        storage.append(record)
        if !record.idempotencyKey.isEmpty { keys[record.idempotencyKey] = record.position.offset }
    }

    init(snapshot: OrderSnapshot, history: [OrderChangeRecord]) {
        self.snapshot = snapshot
        self.storage = history
        for record in history where !record.idempotencyKey.isEmpty {
            keys[record.idempotencyKey] = record.position.offset
        }
    }

    var history: [OrderChangeRecord] { Array(storage[head...]) }
    var firstOffset: UInt64? { head < storage.count ? storage[head].position.offset : nil }

    func record(at offset: UInt64) -> OrderChangeRecord? {
        guard let first = firstOffset, offset >= first else { return nil }
        let index = head + Int(offset - first)
        return index < storage.count ? storage[index] : nil
    }

    func records(from offset: UInt64, limit: Int) -> [OrderChangeRecord] {
        guard let first = firstOffset, offset >= first else { return [] }
        let start = head + Int(offset - first)
        guard start < storage.count else { return [] }
        return Array(storage[start..<min(storage.count, start + limit)])
    }

    func append(_ record: OrderChangeRecord, snapshot: OrderSnapshot) {
        storage.append(record)
        self.snapshot = snapshot
        if !record.idempotencyKey.isEmpty { keys[record.idempotencyKey] = record.position.offset }
    }

    /// Keeps the newest `count` records (at least one).
    func trim(toCount count: Int) {
        let keep = max(1, count)
        while storage.count - head > keep { dropFirst() }
        compact()
    }

    /// Drops records older than `maxAgeMillis`, keeping the latest record.
    func trim(olderThan nowMillis: UInt64, maxAgeMillis: UInt64) {
        while storage.count - head > 1 {
            let stamp = storage[head].timestampMillis
            guard nowMillis > stamp, nowMillis - stamp > maxAgeMillis else { break }
            dropFirst()
        }
        compact()
    }

    private func dropFirst() {
        let key = storage[head].idempotencyKey
        if !key.isEmpty { keys[key] = nil }
        head += 1
    }

    /// Moves the retained window to the array's front once more than half of it is dropped records.
    private func compact() {
        if head > 16 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }
}
