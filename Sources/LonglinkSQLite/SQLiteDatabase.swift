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
        epoch = try Self.loadEpoch(connection)
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
        if connection.handle != nil {
            // Best effort: a failure leaves the WAL in place, which the next open replays.
            try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        connection.close()
    }
}
