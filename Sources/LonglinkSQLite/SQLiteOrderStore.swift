public import LonglinkCore

/// Longlink's embedded default `OrderStore`: one SQLite file in WAL mode.
///
/// Layout (see `SQLiteSchema`): `orders` holds each order's snapshot, `history` its retained records keyed by
/// (order, offset), a partial index on the idempotency key finds replays, `meta` holds the store's epoch (random
/// when the file is created, then stable across reopens) and `schema_version` the applied migrations.
///
/// `applyBatch` is group commit: one `BEGIN IMMEDIATE … COMMIT` for the whole batch, and results reported only
/// after `COMMIT` succeeded. A change whose writes fail (a full disk) rolls back only itself: the batch is then
/// rolled back and replayed with a `SAVEPOINT` around each change (the first pass runs without them, two
/// statements fewer per change). If `COMMIT` fails, every change of the batch fails with `.storage` and none is
/// reported stored.
///
/// What survives a crash:
/// - With WAL and `synchronous: .normal` (the default), every committed transaction (so every change `apply`
///   or `applyBatch` returned as stored) survives a crash of the process, including `kill -9`: a commit has
///   written the WAL, which then lives in the OS page cache and is replayed on the next open. A power loss or
///   kernel crash may lose the last transactions (never corrupt the file): the WAL is fsynced only at
///   checkpoints.
/// - With `synchronous: .full`, the WAL is fsynced at every commit, so committed changes also survive power
///   loss, at the cost of one fsync per batch (bigger batches amortize it).
///
/// Failures of the file or the disk (corrupt or non-SQLite file, read-only file or directory, missing
/// directory, full disk) are `StoreError.storage` with what to do; they never crash the process, and a failed
/// write leaves the stored data as it was.
///
/// Like every store it is owned by one thread at a time and is not `Sendable`.
public final class SQLiteOrderStore: OrderStore {
    /// How hard a commit pushes data to the disk.
    public enum Durability: Hashable, Sendable {
        /// `PRAGMA synchronous = NORMAL`: commits survive a process crash; power loss may lose the last ones.
        case normal
        /// `PRAGMA synchronous = FULL`: commits also survive power loss; one fsync per commit.
        case full
    }

    /// The epoch of this store's history, kept in the file.
    public let epoch: UInt32
    /// The path of the database file.
    public let path: String
    /// The state machines changes are validated against.
    public let catalog: StateMachineCatalog
    /// How much history is kept.
    public let retention: StoreRetention
    let clock: any WallClock
    let database: SQLiteDatabase
    let statements: SQLiteStatements
    var closed = false
    /// Orders written recently, so a change to a hot order skips the SELECT (see `SQLiteOrderStore+Apply`).
    var cache = SQLiteOrderCache()

    /// Opens the store at `path`, creating the file (not its directory) when missing, and migrates its schema.
    /// - Parameters:
    ///   - path: the database file; `-wal` and `-shm` files appear next to it.
    ///   - catalog: the state machines (default: the built-in lines).
    ///   - retention: history limits (default: `.standard`).
    ///   - clock: the source of record timestamps (default: the system clock).
    ///   - synchronous: what a commit survives (default: `.normal`, see the type's documentation).
    /// - Throws: `.storage` when the file cannot be opened, created, written or read as a Longlink database.
    public convenience init(
        path: String,
        catalog: StateMachineCatalog = .builtIn,
        retention: StoreRetention = .standard,
        clock: any WallClock = SystemWallClock(),
        synchronous: Durability = .normal
    ) throws(StoreError) {
        try self.init(
            path: path,
            catalog: catalog,
            retention: retention,
            clock: clock,
            synchronous: synchronous,
            migrations: SQLiteSchema.migrations
        )
    }

    /// Opens the existing store at `path` for reading only, as `longlink migrate` reads its source: nothing is
    /// created, migrated or written (writes fail with `.storage`). A missing file, or one without Longlink's
    /// tables (an empty file, another program's database), is refused naming the path.
    public convenience init(readingExisting path: String, catalog: StateMachineCatalog = .builtIn) throws(StoreError) {
        let database: SQLiteDatabase
        do {
            database = try SQLiteDatabase(readingExisting: path)
        } catch {
            throw error.storeError(path: path)
        }
        try self.init(database: database, catalog: catalog, retention: .standard, clock: SystemWallClock())
    }

    /// Opens, creating and migrating; tests pass extra migrations to exercise the mechanism.
    convenience init(
        path: String,
        catalog: StateMachineCatalog,
        retention: StoreRetention,
        clock: any WallClock,
        synchronous: Durability,
        migrations: [SQLiteSchema.Migration]
    ) throws(StoreError) {
        let database: SQLiteDatabase
        do {
            database = try SQLiteDatabase(
                path: path,
                synchronousFull: synchronous == .full,
                migrations: migrations,
                nowMillis: clock.nowMillis()
            )
        } catch {
            throw error.storeError(path: path)
        }
        try self.init(database: database, catalog: catalog, retention: retention, clock: clock)
    }

    /// The designated initializer, over an open database.
    private init(
        database: SQLiteDatabase,
        catalog: StateMachineCatalog,
        retention: StoreRetention,
        clock: any WallClock
    ) throws(StoreError) {
        self.path = database.path
        self.catalog = catalog
        self.retention = retention
        self.clock = clock
        self.database = database
        do {
            statements = try SQLiteStatements(database.connection)
        } catch {
            database.close()
            throw error.storeError(path: database.path)
        }
        epoch = database.epoch
    }

    deinit { database.close() }

    // MARK: Reads

    public func snapshot(of line: BusinessLine, _ order: OrderID) throws(StoreError) -> OrderSnapshot? {
        try storage { () throws(SQLiteError) in try loadOrder(line, order)?.snapshot }
    }

    public func records(of line: BusinessLine, _ order: OrderID, after position: StreamPosition, limit: Int)
        throws(StoreError) -> HistoryRead
    {
        try storage { () throws(SQLiteError) -> HistoryRead in
            let bounds = statements.selectBounds
            defer { bounds.reset() }
            try bounds.bind(line.name, at: 1)
            try bounds.bind(order.rawValue, at: 2)
            var key: Int64?
            var first: UInt64?
            var last: UInt64?
            if try bounds.step() {
                key = bounds.int64(0)
                last = bounds.uint64(1)
                first = bounds.optionalInt64(2).map { UInt64(bitPattern: $0) }
            }
            let window = ChangeValidation.window(
                after: position,
                epoch: epoch,
                firstOffset: first,
                lastOffset: last,
                limit: limit
            )
            switch window {
            case .expired: return .expired
            case .upToDate: return .records([])
            case .from(let offset, let limit):
                guard let key else { return .records([]) }
                return .records(try loadRecords(key: key, line: line, order: order, from: offset, limit: limit))
            }
        }
    }

    public func retainedHistory(of line: BusinessLine, _ order: OrderID) throws(StoreError)
        -> (snapshot: OrderSnapshot, history: [OrderChangeRecord])?
    {
        try storage { () throws(SQLiteError) -> (snapshot: OrderSnapshot, history: [OrderChangeRecord])? in
            guard let stored = try loadOrder(line, order) else { return nil }
            let history = try loadRecords(key: stored.key, line: line, order: order, from: 0, limit: Int.max)
            return (stored.snapshot, history)
        }
    }

    public func orders(after cursor: OrderCursor?, limit: Int) throws(StoreError) -> [OrderSnapshot] {
        guard limit > 0 else { return [] }
        return try storage { () throws(SQLiteError) -> [OrderSnapshot] in
            let query: SQLiteStatement
            if let cursor {
                query = statements.selectOrdersAfter
                try query.bind(cursor.line.name, at: 1)
                try query.bind(cursor.orderID.rawValue, at: 2)
                try query.bind(Int64(limit), at: 3)
            } else {
                query = statements.selectFirstOrders
                try query.bind(Int64(limit), at: 1)
            }
            defer { query.reset() }
            var snapshots: [OrderSnapshot] = []
            while try query.step() {
                guard let row = SQLiteStatements.order(from: query, epoch: epoch) else {
                    throw SQLiteError.invalidRow("an order row has an invalid line or id")
                }
                snapshots.append(row.snapshot)
            }
            return snapshots
        }
    }

    /// Runs SQLite's `PRAGMA integrity_check`; throws `.storage` describing the damage when the file is not sound.
    public func verifyIntegrity() throws(StoreError) {
        let problems = try storage { () throws(SQLiteError) in try database.integrityProblems() }
        if let problems {
            throw .storage(
                "integrity check of \(path) failed: \(problems); restore a backup or start a new store",
                retryable: false
            )
        }
    }

    /// Checkpoints the WAL into the database file and closes it. Further calls throw `.closed`.
    public func shutdown() {
        guard !closed else { return }
        closed = true
        database.close()
    }

    // MARK: Helpers shared by the extensions

    /// Runs SQLite work, mapping its errors to `StoreError.storage` (and refusing work once closed).
    func storage<T>(_ body: () throws(SQLiteError) -> T) throws(StoreError) -> T {
        guard !closed else { throw .closed }
        do {
            return try body()
        } catch {
            throw error.storeError(path: path)
        }
    }

    /// The stored order, or nil when it does not exist.
    func loadOrder(_ line: BusinessLine, _ order: OrderID) throws(SQLiteError) -> StoredOrder? {
        let query = statements.selectOrder
        defer { query.reset() }
        try query.bind(line.name, at: 1)
        try query.bind(order.rawValue, at: 2)
        guard try query.step() else { return nil }
        guard let row = SQLiteStatements.order(from: query, epoch: epoch) else {
            throw SQLiteError.invalidRow("the row of \(line)/\(order) is unreadable")
        }
        return row
    }

    /// Up to `limit` records of the order from `offset` (inclusive), oldest first.
    func loadRecords(key: Int64, line: BusinessLine, order: OrderID, from offset: UInt64, limit: Int)
        throws(SQLiteError) -> [OrderChangeRecord]
    {
        let query = statements.selectRecords
        defer { query.reset() }
        try query.bind(key, at: 1)
        try query.bind(offset, at: 2)
        try query.bind(Int64(limit), at: 3)
        var records: [OrderChangeRecord] = []
        while try query.step() {
            records.append(SQLiteStatements.record(from: query, line: line, orderID: order, epoch: epoch))
        }
        return records
    }
}
