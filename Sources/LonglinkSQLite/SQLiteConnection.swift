internal import CLonglinkSQLite

/// One open SQLite database handle. Confined to the thread that owns its store (opened with
/// `SQLITE_OPEN_NOMUTEX`, SQLite's multi-thread mode: one connection must not be used by two threads at once).
final class SQLiteConnection {
    private(set) var handle: OpaquePointer?
    /// The path it was opened with, for error messages.
    let path: String

    /// Opens (and creates when `create` is true) the database file at `path`; `readOnly` opens an existing file
    /// for reading only (never creating it).
    init(path: String, create: Bool = true, readOnly: Bool = false) throws(SQLiteError) {
        _ = Self.configured
        self.path = path
        var db: OpaquePointer?
        var flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc, message: message, operation: "open")
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
    }

    deinit { close() }

    /// Process-wide SQLite settings, made once before the first open: no global memory statistics (a mutex
    /// around every allocation; nothing here reads them).
    private static let configured: Bool = CLonglinkSQLite_disable_memory_statistics() == SQLITE_OK

    /// Finalizes every statement of this connection and closes the handle, so the WAL is checkpointed and its
    /// files removed now rather than when the last `SQLiteStatement` is released; idempotent. Statements refuse
    /// work afterwards (they check `isOpen`).
    func close() {
        guard let db = handle else { return }
        handle = nil
        while let stmt = sqlite3_next_stmt(db, nil) { sqlite3_finalize(stmt) }
        sqlite3_close_v2(db)
    }

    /// Whether the handle is still open.
    var isOpen: Bool { handle != nil }

    /// The error SQLite reports for the last failed call on this handle.
    func error(_ rc: Int32, _ operation: String) -> SQLiteError {
        guard let db = handle else {
            return SQLiteError(code: SQLITE_MISUSE, message: "the connection is closed", operation: operation)
        }
        let extended = sqlite3_extended_errcode(db)
        // The extended code belongs to the last call only if its primary code matches the code we got.
        let code = (extended & 0xFF) == (rc & 0xFF) ? extended : rc
        return SQLiteError(code: code, message: String(cString: sqlite3_errmsg(db)), operation: operation)
    }

    /// Runs one or more SQL statements that return no rows of interest.
    func execute(_ sql: String) throws(SQLiteError) {
        guard let db = handle else { throw error(SQLITE_MISUSE, sql) }
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, Self.label(sql)) }
    }

    /// Compiles `sql` into a reusable statement.
    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        guard let db = handle else { throw error(SQLITE_MISUSE, "prepare: \(sql)") }
        var stmt: OpaquePointer?
        // SQLITE_PREPARE_PERSISTENT: the statement is kept for the connection's life, so SQLite may allocate it
        // outside its lookaside memory.
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc, "prepare: \(Self.label(sql))") }
        return SQLiteStatement(stmt, connection: self, sql: sql)
    }

    /// How errors name a statement: its first line, at most 60 characters.
    static func label(_ sql: String) -> String {
        let firstLine = sql.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? sql
        return firstLine.count > 60 ? "\(firstLine.prefix(57))..." : firstLine
    }

    /// Runs a query returning a single value in its first row (e.g. a PRAGMA), as text.
    func scalarText(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.text(0)
    }

    /// Runs a query returning a single integer in its first row.
    func scalarInt(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.int64(0)
    }

    /// True when no transaction is open: either none was begun, or SQLite rolled one back by itself after an
    /// error (it may do so for SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY and SQLITE_NOMEM).
    var isAutocommit: Bool {
        guard let db = handle else { return true }
        return sqlite3_get_autocommit(db) != 0
    }

    /// Whether SQLite opened the main database read-only (e.g. the file could not be opened for writing).
    var isReadOnly: Bool {
        guard let db = handle else { return true }
        return sqlite3_db_readonly(db, "main") == 1
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int {
        guard let db = handle else { return 0 }
        return Int(sqlite3_changes64(db))
    }

    /// Sets how long a call waits for another connection's lock before failing with SQLITE_BUSY.
    func setBusyTimeout(milliseconds: Int32) {
        guard let db = handle else { return }
        sqlite3_busy_timeout(db, milliseconds)
    }

    /// Sets an integer `sqlite3_db_config` option; returns the value in effect.
    @discardableResult
    func configure(_ option: Int32, _ value: Int32) throws(SQLiteError) -> Int32 {
        guard let db = handle else { throw error(SQLITE_MISUSE, "db_config") }
        var current: Int32 = 0
        let rc = CLonglinkSQLite_db_config_int(db, option, value, &current)
        guard rc == SQLITE_OK else { throw error(rc, "db_config(\(option))") }
        return current
    }
}
