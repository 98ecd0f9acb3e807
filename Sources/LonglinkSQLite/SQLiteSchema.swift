internal import CLonglinkSQLite

/// The database layout and its ordered migrations.
///
/// `schema_version` holds one row per applied migration. Opening a store applies, in order and each in its own
/// transaction, every migration newer than the highest recorded version. To change the layout, append a
/// `Migration` with the next version to `migrations`; never edit one that has shipped.
enum SQLiteSchema {
    /// One step of the layout's history.
    struct Migration {
        /// The version this migration brings the database to (1, 2, 3, ... without gaps).
        let version: Int
        /// One line saying what it does; stored in `schema_version`.
        let summary: String
        /// The statements to run.
        let sql: String
    }

    /// Every migration, oldest first.
    static let migrations: [Migration] = [version1, version2]

    /// The version a database has once every migration ran.
    static var latestVersion: Int { migrations.last?.version ?? 0 }

    /// v2: feature toggles beside the orders. One row per toggle with its current value (`value_kind` is `bool`,
    /// `rollout` or `string`; `value_text` is `true`/`false`, the percentage, or the text) and the position of its
    /// last change (offsets count per toggle within `epoch`; a toggle keeps no history, the value is what counts).
    static let version2 = Migration(
        version: 2,
        summary: "feature toggles",
        sql: """
            CREATE TABLE toggles (
                app TEXT NOT NULL,
                name TEXT NOT NULL,
                value_kind TEXT NOT NULL,
                value_text TEXT NOT NULL,
                epoch INTEGER NOT NULL,
                last_offset INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                PRIMARY KEY (app, name)
            ) WITHOUT ROWID;
            """
    )

    /// v1, the initial layout.
    ///
    /// - `meta`: key/value facts about the store; `epoch` is chosen at random when the store is created.
    /// - `orders`: one row per order, its snapshot. `order_key` is a compact integer that history rows refer to;
    ///   `terminal` caches whether `state` ends the lifecycle (for `expire`); `last_offset` is the snapshot's
    ///   position. `aging_from` is a lower bound of the oldest timestamp among the order's records other than
    ///   its latest (NULL when only the latest is retained): `expire` visits only orders with `aging_from`
    ///   before the age cutoff, so history needs no timestamp index that every insert would have to update.
    /// - `history`: the records, keyed by (order_key, record_offset). The idempotency index is the partial
    ///   index on (order_key, idempotency_key): a key is scoped to its order and remembered as long as its
    ///   record is retained.
    static let version1 = Migration(
        version: 1,
        summary: "initial schema: meta, orders, history, idempotency index",
        sql: """
            CREATE TABLE meta (
                key TEXT PRIMARY KEY NOT NULL,
                value NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE orders (
                order_key INTEGER PRIMARY KEY,
                line TEXT NOT NULL,
                order_id TEXT NOT NULL,
                state TEXT NOT NULL,
                terminal INTEGER NOT NULL,
                last_offset INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                driver_id TEXT,
                eta_seconds INTEGER,
                latitude_e6 INTEGER,
                longitude_e6 INTEGER,
                cancellation_reason TEXT,
                payload BLOB,
                aging_from INTEGER,
                UNIQUE (line, order_id)
            );
            CREATE INDEX orders_terminal_expiry ON orders (updated_at) WHERE terminal = 1;
            CREATE INDEX orders_aging ON orders (aging_from) WHERE aging_from IS NOT NULL;
            CREATE TABLE history (
                order_key INTEGER NOT NULL,
                record_offset INTEGER NOT NULL,
                accepted_at INTEGER NOT NULL,
                from_state TEXT,
                to_state TEXT NOT NULL,
                driver_id TEXT,
                eta_seconds INTEGER,
                latitude_e6 INTEGER,
                longitude_e6 INTEGER,
                cancellation_reason TEXT,
                payload BLOB,
                idempotency_key TEXT NOT NULL DEFAULT '',
                PRIMARY KEY (order_key, record_offset)
            ) WITHOUT ROWID;
            CREATE INDEX history_idempotency ON history (order_key, idempotency_key) WHERE idempotency_key <> '';
            """
    )

    /// Brings the database up to the last of `migrations`; returns the version it had before (0 when new).
    @discardableResult
    static func migrate(
        _ connection: SQLiteConnection,
        migrations: [Migration] = SQLiteSchema.migrations,
        nowMillis: UInt64
    ) throws(SQLiteError) -> Int {
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS schema_version (
                version INTEGER PRIMARY KEY,
                summary TEXT NOT NULL,
                applied_at INTEGER NOT NULL
            )
            """
        )
        let before = Int(try connection.scalarInt("SELECT MAX(version) FROM schema_version") ?? 0)
        let latest = migrations.last?.version ?? 0
        guard before <= latest else {
            throw SQLiteError(
                code: SQLITE_ERROR,
                message: "the database has schema version \(before) but this build of Longlink knows only up to "
                    + "\(latest); run a newer Longlink",
                operation: "migrate"
            )
        }
        let record = try connection.prepare(
            "INSERT INTO schema_version (version, summary, applied_at) VALUES (?, ?, ?)"
        )
        for migration in migrations where migration.version > before {
            try connection.execute("BEGIN IMMEDIATE")
            do {
                // Another process may have migrated meanwhile; the lock is ours now, so look again.
                let current = Int(try connection.scalarInt("SELECT MAX(version) FROM schema_version") ?? 0)
                if migration.version > current {
                    try connection.execute(migration.sql)
                    try record.bind(Int64(migration.version), at: 1)
                    try record.bind(migration.summary, at: 2)
                    try record.bind(nowMillis, at: 3)
                    try record.run()
                }
                try connection.execute("COMMIT")
            } catch {
                record.reset()
                if !connection.isAutocommit { try? connection.execute("ROLLBACK") }
                throw SQLiteError(
                    code: error.code,
                    message: error.message,
                    operation: "migration to v\(migration.version): \(error.operation)"
                )
            }
        }
        return before
    }

    /// The applied versions, oldest first.
    static func appliedVersions(_ connection: SQLiteConnection) throws(SQLiteError) -> [Int] {
        let query = try connection.prepare("SELECT version FROM schema_version ORDER BY version")
        var versions: [Int] = []
        while try query.step() { versions.append(Int(query.int64(0))) }
        return versions
    }
}
