public import LonglinkCore

/// Feature toggles in a Longlink SQLite file: the `toggles` table (schema v2), beside the orders of the
/// `SQLiteOrderStore` on the same file, on a connection of its own. Toggle positions carry the file's epoch.
///
/// Opening migrates the file like `SQLiteOrderStore` does (a v1 file gets its `toggles` table), so either store
/// may be opened first; `init(readingExisting:)` changes nothing and reads a v1 file as holding no toggles.
/// The table's format is unchanged from when toggles were part of the order store: files written then open as
/// they are. Toggles change rarely, so statements are prepared per call.
///
/// Like every store it is owned by one thread at a time and is not `Sendable`. Two connections to one file in one
/// process are fine in WAL mode; the gateway uses both from the Store's writer thread, so they never wait on
/// each other.
public final class SQLiteToggleStore: ToggleStore {
    /// The file's epoch.
    public let epoch: UInt32
    /// The path of the database file.
    public let path: String
    let database: SQLiteDatabase
    private var closed = false

    /// Opens the store at `path`, creating the file (not its directory) when missing, and migrates its schema.
    /// - Throws: `.storage` when the file cannot be opened, created, written or read as a Longlink database.
    public convenience init(path: String, synchronous: SQLiteOrderStore.Durability = .normal) throws(StoreError) {
        try self.init(path: path, synchronous: synchronous, migrations: SQLiteSchema.migrations)
    }

    /// Opens, creating and migrating; tests pass older migrations to make files of an earlier schema.
    init(path: String, synchronous: SQLiteOrderStore.Durability, migrations: [SQLiteSchema.Migration]) throws(StoreError) {
        do {
            database = try SQLiteDatabase(
                path: path,
                synchronousFull: synchronous == .full,
                migrations: migrations,
                nowMillis: SystemWallClock().nowMillis()
            )
        } catch {
            throw error.storeError(path: path)
        }
        self.path = path
        epoch = database.epoch
    }

    /// Opens the existing store at `path` for reading only, as `longlink migrate` reads its source (see
    /// `SQLiteOrderStore.init(readingExisting:)`): writes fail with `.storage`.
    public init(readingExisting path: String) throws(StoreError) {
        do {
            database = try SQLiteDatabase(readingExisting: path)
        } catch {
            throw error.storeError(path: path)
        }
        self.path = path
        epoch = database.epoch
    }

    deinit { database.close() }

    public func setToggle(app: String, name: String, value: ToggleValue, nowMillis: UInt64) throws(StoreError) -> FeatureToggle {
        guard !closed else { throw .closed }
        guard var toggle = FeatureToggle(app: app, name: name, value: value) else { throw .invalidToggle(app: app, name: name) }
        let (kind, text) = Self.columns(value)
        let epoch = self.epoch
        let offset = try storage { () throws(SQLiteError) -> UInt64 in
            let query = try database.connection.prepare(
                """
                INSERT INTO toggles (app, name, value_kind, value_text, epoch, last_offset, updated_at)
                VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6)
                ON CONFLICT (app, name) DO UPDATE SET
                    value_kind = excluded.value_kind, value_text = excluded.value_text,
                    last_offset = CASE WHEN epoch = excluded.epoch THEN last_offset + 1 ELSE 1 END,
                    epoch = excluded.epoch, updated_at = excluded.updated_at
                RETURNING last_offset
                """
            )
            defer { query.reset() }
            try query.bind(app, at: 1)
            try query.bind(name, at: 2)
            try query.bind(kind, at: 3)
            try query.bind(text, at: 4)
            try query.bind(Int64(epoch), at: 5)
            try query.bind(nowMillis, at: 6)
            guard try query.step() else { throw SQLiteError.invalidRow("toggle upsert returned no row") }
            return query.uint64(0)
        }
        toggle.position = StreamPosition(epoch: epoch, offset: offset)
        toggle.updatedAtMillis = nowMillis
        return toggle
    }

    /// Writes the toggle as given (position in this store's epoch) in one transaction with the check of what is
    /// stored.
    @discardableResult
    public func importToggle(_ toggle: FeatureToggle, policy: ImportPolicy) throws(StoreError) -> ImportOutcome {
        guard toggle.position.offset >= 1 else { throw .invalidField("toggle \(toggle.app)/\(toggle.name): offset 0") }
        var imported = toggle
        imported.position.epoch = epoch
        let (kind, text) = Self.columns(toggle.value)
        let decided = try storage { () throws(SQLiteError) -> Result<ImportOutcome, StoreError> in
            try database.connection.execute("BEGIN IMMEDIATE")
            do throws(SQLiteError) {
                let stored = try readToggles(app: toggle.app).first { $0.name == toggle.name }
                let decision = Result { () throws(StoreError) in
                    try ChangeValidation.importOutcome(stored: stored, imported: imported, policy: policy)
                }
                guard case .success(let outcome) = decision else {
                    try database.connection.execute("ROLLBACK")
                    return decision
                }
                if outcome != .identical {
                    let upsert = try database.connection.prepare(
                        """
                        INSERT INTO toggles (app, name, value_kind, value_text, epoch, last_offset, updated_at)
                        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                        ON CONFLICT (app, name) DO UPDATE SET
                            value_kind = excluded.value_kind, value_text = excluded.value_text,
                            epoch = excluded.epoch, last_offset = excluded.last_offset, updated_at = excluded.updated_at
                        """
                    )
                    try upsert.bind(toggle.app, at: 1)
                    try upsert.bind(toggle.name, at: 2)
                    try upsert.bind(kind, at: 3)
                    try upsert.bind(text, at: 4)
                    try upsert.bind(Int64(epoch), at: 5)
                    try upsert.bind(toggle.position.offset, at: 6)
                    try upsert.bind(toggle.updatedAtMillis, at: 7)
                    try upsert.run()
                }
                try database.connection.execute("COMMIT")
                return .success(outcome)
            } catch {
                if !database.connection.isAutocommit { try? database.connection.execute("ROLLBACK") }
                throw error
            }
        }
        return try decided.get()
    }

    public func toggles(app: String?) throws(StoreError) -> [FeatureToggle] {
        try storage { () throws(SQLiteError) -> [FeatureToggle] in try readToggles(app: app) }
    }

    /// Checkpoints and closes the connection. Further calls throw `.closed`.
    public func shutdown() {
        guard !closed else { return }
        closed = true
        database.close()
    }

    /// Runs SQLite work, mapping its errors to `StoreError.storage` (and refusing work once closed).
    private func storage<T>(_ body: () throws(SQLiteError) -> T) throws(StoreError) -> T {
        guard !closed else { throw .closed }
        do {
            return try body()
        } catch {
            throw error.storeError(path: path)
        }
    }

    /// The stored toggles of `app` (all when nil); none in a read-only v1 file, which has no `toggles` table.
    private func readToggles(app: String?) throws(SQLiteError) -> [FeatureToggle] {
        if database.isReadOnly && database.schemaVersion < SQLiteSchema.version2.version { return [] }
        let query = try database.connection.prepare(
            """
            SELECT app, name, value_kind, value_text, epoch, last_offset, updated_at FROM toggles
            WHERE ?1 IS NULL OR app = ?1 ORDER BY app, name
            """
        )
        defer { query.reset() }
        try query.bind(app, at: 1)
        var toggles: [FeatureToggle] = []
        while try query.step() {
            guard let value = Self.value(kind: query.text(2), text: query.text(3)),
                let toggle = FeatureToggle(
                    app: query.text(0),
                    name: query.text(1),
                    value: value,
                    position: StreamPosition(epoch: UInt32(truncatingIfNeeded: query.int64(4)), offset: query.uint64(5)),
                    updatedAtMillis: query.uint64(6)
                )
            else { throw SQLiteError.invalidRow("toggle row \(query.text(0))/\(query.text(1)) is unreadable") }
            toggles.append(toggle)
        }
        return toggles
    }

    static func columns(_ value: ToggleValue) -> (String, String) {
        switch value {
        case .bool(let on): ("bool", on ? "true" : "false")
        case .rollout(let percent): ("rollout", String(percent))
        case .string(let text): ("string", text)
        }
    }

    static func value(kind: String, text: String) -> ToggleValue? {
        switch kind {
        case "bool": .bool(text == "true")
        case "rollout": Int(text).map { .rollout(percent: $0) }
        case "string": .string(text)
        default: nil
        }
    }
}

@available(*, unavailable)
extension SQLiteToggleStore: Sendable {}
