internal import CLonglinkSQLite
import Glibc

/// An open, configured and migrated Longlink database file: the connection, its settings and the store's epoch.
/// `SQLiteOrderStore` builds on it; it knows nothing about orders.
final class SQLiteDatabase {
    /// The connection (one per store; SQLite's multi-thread mode).
    let connection: SQLiteConnection
    /// The path of the database file.
    let path: String
    /// The store's epoch: chosen at random when the file is created, then kept forever.
    let epoch: UInt32
    /// The schema version the file had before this open (0 when it was created now).
    let versionBeforeOpen: Int
    /// The schema version it has now (the latest, except for a file opened read-only).
    let schemaVersion: Int
    /// Whether it was opened read-only (`init(readingExisting:)`).
    let isReadOnly: Bool

    /// How long a statement waits for another process's lock before failing.
    static let busyTimeoutMillis: Int32 = 5_000

    /// Opens or creates the file at `path`, sets WAL mode and `synchronous`, and applies pending migrations.
    init(
        path: String,
        synchronousFull: Bool,
        migrations: [SQLiteSchema.Migration] = SQLiteSchema.migrations,
        nowMillis: UInt64
    ) throws(SQLiteError) {
        self.path = path
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path)
        } catch {
            throw Self.explainOpenFailure(error, path: path)
        }
        self.connection = connection
        connection.setBusyTimeout(milliseconds: Self.busyTimeoutMillis)
        // Refuse SQL that can corrupt the file on purpose (writable_schema, direct page writes).
        try connection.configure(SQLITE_DBCONFIG_DEFENSIVE, 1)

        // The first statement reads the header: a file that is not a database fails here with SQLITE_NOTADB.
        let mode = try connection.scalarText("PRAGMA journal_mode = WAL")
        if connection.isReadOnly {
            throw SQLiteError(
                code: SQLITE_READONLY,
                message: "the file can only be opened read-only (file or directory not writable, or read-only "
                    + "file system)",
                operation: "open"
            )
        }
        guard mode?.lowercased() == "wal" else {
            throw SQLiteError(
                code: SQLITE_CANTOPEN,
                message: "could not switch to WAL journal mode (got '\(mode ?? "nothing")'); the file system must "
                    + "support shared memory (mmap) and the directory must be writable",
                operation: "PRAGMA journal_mode = WAL"
            )
        }
        try connection.execute(synchronousFull ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
        // 16 MiB page cache; temporary b-trees (sorts) in memory.
        try connection.execute("PRAGMA cache_size = -16384; PRAGMA temp_store = MEMORY")
        versionBeforeOpen = try SQLiteSchema.migrate(connection, migrations: migrations, nowMillis: nowMillis)
        schemaVersion = migrations.last?.version ?? 0
        isReadOnly = false
        epoch = try Self.loadEpoch(connection)
    }

    /// Opens an existing Longlink database at `path` read-only: nothing is created, migrated or written (a WAL
    /// file's `-wal`/`-shm` companions may appear, as for any reader). A missing file, or one without Longlink's
    /// tables (an empty file, another program's database), is refused naming the path.
    init(readingExisting path: String, latestVersion: Int = SQLiteSchema.latestVersion) throws(SQLiteError) {
        self.path = path
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw SQLiteError(
                code: SQLITE_CANTOPEN,
                message: "no such file",
                operation: "open",
                explained: "no Longlink store at \(path): the file does not exist; check the path (a store read "
                    + "from is opened read-only, nothing is created)"
            )
        }
        let connection: SQLiteConnection
        do {
            connection = try SQLiteConnection(path: path, create: false, readOnly: true)
        } catch {
            throw Self.explainOpenFailure(error, path: path)
        }
        self.connection = connection
        connection.setBusyTimeout(milliseconds: Self.busyTimeoutMillis)
        // The first statement reads the header: a file that is not a database fails here with SQLITE_NOTADB.
        let tables = try connection.scalarInt(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('schema_version', 'meta', 'orders', 'history')"
        )
        let version = tables == 4 ? Int(try connection.scalarInt("SELECT MAX(version) FROM schema_version") ?? 0) : 0
        guard version >= 1 else {
            throw SQLiteError(
                code: SQLITE_NOTADB,
                message: "no Longlink tables",
                operation: "open",
                explained: "\(path) is not a Longlink store: it has no Longlink tables (an empty file, or another "
                    + "program's database); check the path"
            )
        }
        guard version <= latestVersion else {
            throw SQLiteError(
                code: SQLITE_ERROR,
                message: "the database has schema version \(version) but this build of Longlink knows only up to "
                    + "\(latestVersion); run a newer Longlink",
                operation: "open"
            )
        }
        versionBeforeOpen = version
        schemaVersion = version
        isReadOnly = true
        guard let stored = try connection.scalarInt("SELECT value FROM meta WHERE key = 'epoch'"),
            let epoch = UInt32(exactly: stored), epoch != 0
        else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "the stored epoch is missing or invalid", operation: "load epoch")
        }
        self.epoch = epoch
    }

    /// Reads the epoch, choosing and storing a random one when the file has none yet.
    private static func loadEpoch(_ connection: SQLiteConnection) throws(SQLiteError) -> UInt32 {
        // INSERT OR IGNORE keeps the first process's choice if two open a new file at the same time.
        let insert = try connection.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('epoch', ?)")
        try insert.bind(Int64(UInt32.random(in: 1...UInt32.max)), at: 1)
        try insert.run()
        guard let stored = try connection.scalarInt("SELECT value FROM meta WHERE key = 'epoch'"),
            let epoch = UInt32(exactly: stored), epoch != 0
        else {
            throw SQLiteError(
                code: SQLITE_CORRUPT,
                message: "the stored epoch is missing or invalid",
                operation: "load epoch"
            )
        }
        return epoch
    }

    /// Adds what `sqlite3_open_v2` cannot say: whether the directory is missing.
    private static func explainOpenFailure(_ error: SQLiteError, path: String) -> SQLiteError {
        guard error.primaryCode == SQLITE_CANTOPEN else { return error }
        let directory = Self.directory(of: path)
        var info = stat()
        if stat(directory, &info) != 0 {
            return SQLiteError(
                code: error.code,
                message: "the directory '\(directory)' does not exist (\(error.message)); create it first",
                operation: error.operation
            )
        }
        if (info.st_mode & S_IFMT) != S_IFDIR {
            return SQLiteError(
                code: error.code,
                message: "'\(directory)' is not a directory (\(error.message))",
                operation: error.operation
            )
        }
        return error
    }

    /// The directory part of `path` ("." when there is none).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    /// Runs `PRAGMA integrity_check`: nil when the file is sound, otherwise SQLite's findings.
    func integrityProblems() throws(SQLiteError) -> String? {
        let check = try connection.prepare("PRAGMA integrity_check")
        var lines: [String] = []
        while try check.step() { lines.append(check.text(0)) }
        return lines == ["ok"] ? nil : lines.joined(separator: "; ")
    }

    /// Caps the file at `pages` pages (of 4 KiB by default): how tests simulate a full disk without root.
    func setMaxPageCount(_ pages: Int) throws(SQLiteError) {
        try connection.execute("PRAGMA max_page_count = \(pages)")
    }

    /// Checkpoints the WAL into the main file and closes the connection.
    func close() {
        if connection.handle != nil && !isReadOnly {
            // Best effort: a failure leaves the WAL in place, which the next open replays.
            try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        connection.close()
    }
}
