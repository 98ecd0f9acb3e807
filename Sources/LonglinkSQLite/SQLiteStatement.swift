internal import CLonglinkSQLite

/// A prepared statement, compiled once and reused: bind parameters (1-based, as SQLite numbers them), `step()`
/// through the rows, read typed columns (0-based), then `reset()` to clear it for the next use.
final class SQLiteStatement {
    private let stmt: OpaquePointer
    private let connection: SQLiteConnection
    /// The SQL's first line, at most 60 characters: how errors name the statement.
    let label: String

    init(_ stmt: OpaquePointer, connection: SQLiteConnection, sql: String) {
        self.stmt = stmt
        self.connection = connection
        self.label = SQLiteConnection.label(sql)
    }

    // Once the connection is closed it has finalized this statement (see `SQLiteConnection.close`).
    deinit { if connection.isOpen { sqlite3_finalize(stmt) } }

    /// The statement, or a misuse error when its connection was closed (and finalized it).
    private func live(_ what: String) throws(SQLiteError) -> OpaquePointer {
        guard connection.isOpen else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "the connection is closed", operation: "\(what): \(label)")
        }
        return stmt
    }

    // MARK: Binding

    /// Binds an integer.
    func bind(_ value: Int64, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(try live("bind"), index, value), "bind")
    }

    /// Binds an unsigned integer (stored as its 64-bit two's complement; values here stay below 2^63).
    func bind(_ value: UInt64, at index: Int32) throws(SQLiteError) {
        try bind(Int64(bitPattern: value), at: index)
    }

    /// Binds an integer, or NULL when nil.
    func bind(_ value: Int64?, at index: Int32) throws(SQLiteError) {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    /// Binds text (copied by SQLite), or NULL when nil.
    func bind(_ value: String?, at index: Int32) throws(SQLiteError) {
        guard var text = value else { return try bindNull(at: index) }
        let stmt = try live("bind")
        let rc = text.withUTF8 { utf8 -> Int32 in
            guard let base = utf8.baseAddress, !utf8.isEmpty else {
                // A nil pointer would bind NULL; an empty string must stay an empty string.
                return CLonglinkSQLite_bind_text_static(stmt, index, "", 0)
            }
            return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                CLonglinkSQLite_bind_text_transient(stmt, index, $0, Int32(utf8.count))
            }
        }
        try check(rc, "bind")
    }

    /// Binds a blob (copied by SQLite); an empty array binds NULL.
    func bind(blob bytes: [UInt8], at index: Int32) throws(SQLiteError) {
        guard !bytes.isEmpty else { return try bindNull(at: index) }
        let stmt = try live("bind")
        let rc = bytes.withUnsafeBytes { raw in
            CLonglinkSQLite_bind_blob_transient(stmt, index, raw.baseAddress, Int32(raw.count))
        }
        try check(rc, "bind")
    }

    /// Binds NULL.
    func bindNull(at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_null(try live("bind"), index), "bind")
    }

    // MARK: Running

    /// Advances to the next row: true when a row is available, false when the statement is done.
    func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(try live("step"))
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(rc, label)
        }
    }

    /// Runs a statement that returns no rows (INSERT, UPDATE, DELETE), then resets it.
    func run() throws(SQLiteError) {
        defer { reset() }
        _ = try step()
    }

    /// Makes the statement ready for its next use: rewinds it and clears every binding.
    func reset() {
        guard connection.isOpen else { return }
        // sqlite3_reset repeats the last step's error code, which `step()` already reported.
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
    }

    // MARK: Columns

    /// Whether the column of the current row is NULL.
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(stmt, column) == SQLITE_NULL }

    /// The column as an integer (0 for NULL).
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(stmt, column) }

    /// The column as an unsigned integer.
    func uint64(_ column: Int32) -> UInt64 { UInt64(bitPattern: int64(column)) }

    /// The column as an integer, or nil for NULL.
    func optionalInt64(_ column: Int32) -> Int64? { isNull(column) ? nil : int64(column) }

    /// The column as text ("" for NULL).
    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(stmt, column) else { return "" }
        let count = Int(sqlite3_column_bytes(stmt, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// The column as text, or nil for NULL.
    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }

    /// The column as bytes (empty for NULL).
    func blob(_ column: Int32) -> [UInt8] {
        guard let pointer = sqlite3_column_blob(stmt, column) else { return [] }
        let count = Int(sqlite3_column_bytes(stmt, column))
        return [UInt8](UnsafeRawBufferPointer(start: pointer, count: count))
    }

    private func check(_ rc: Int32, _ what: String) throws(SQLiteError) {
        guard rc == SQLITE_OK else { throw connection.error(rc, "\(what): \(label)") }
    }
}
