internal import CLonglinkSQLite
import LonglinkCore

/// A failed SQLite call: the extended result code, SQLite's message and what Longlink was doing.
/// Internal to the adapter; callers see it as a `StoreError.storage` (see `storeError(path:)`).
struct SQLiteError: Error, CustomStringConvertible {
    /// SQLite's extended result code (e.g. 266 = SQLITE_IOERR_READ); `primaryCode` is its low byte.
    var code: Int32
    /// `sqlite3_errmsg` (or `sqlite3_errstr` when there is no connection).
    var message: String
    /// What was being done ("open", "prepare: INSERT INTO history …", "COMMIT").
    var operation: String
    /// The whole explanation, when Longlink knows better than the code what happened (a missing source file).
    var explained: String? = nil

    /// The primary result code (SQLITE_FULL, SQLITE_CORRUPT, ...).
    var primaryCode: Int32 { code & 0xFF }

    /// SQLite's generic name for the code ("database or disk is full").
    var codeName: String { String(cString: sqlite3_errstr(code)) }

    var description: String { "SQLiteError(\(code)): \(operation): \(message)" }

    /// Whether retrying the same operation later may succeed (a lock, a full disk, a transient I/O error).
    var isRetryable: Bool {
        switch primaryCode {
        case SQLITE_BUSY, SQLITE_LOCKED, SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM, SQLITE_INTERRUPT, SQLITE_PROTOCOL:
            true
        default:
            false
        }
    }

    /// The `StoreError` callers see: what went wrong and what to do about it, for the database at `path`.
    func storeError(path: String) -> StoreError {
        .storage(explanation(path: path), retryable: isRetryable)
    }

    /// What went wrong and what to do about it, as one sentence naming the database at `path`.
    func explanation(path: String) -> String {
        if let explained { return explained }
        let detail = "\(operation) failed on \(path): \(message) (SQLite code \(code))"
        let advice: String
        switch primaryCode {
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            advice = "the file is corrupt or is not a SQLite database; stop the gateway, move the file (and its "
                + "-wal/-shm files) aside, then restore a backup or start with a new store (clients resync)"
        case SQLITE_READONLY:
            advice = "the database is read-only; make the file, its -wal/-shm files and its directory writable "
                + "by this user"
        case SQLITE_CANTOPEN:
            advice = "cannot open the file; check that the directory exists and that this user may create "
                + "and write files in it"
        case SQLITE_FULL:
            advice = "the disk or the database is full; free disk space (or raise the quota), then retry"
        case SQLITE_BUSY, SQLITE_LOCKED:
            advice = "another process holds the database lock; make sure only one gateway uses this file"
        case SQLITE_IOERR:
            advice = "an I/O error occurred; check the disk and the kernel log, then retry"
        case SQLITE_PERM, SQLITE_AUTH:
            advice = "access was denied; check file permissions"
        case SQLITE_NOMEM:
            advice = "out of memory; retry later"
        default:
            advice = "see the SQLite message above"
        }
        return "\(detail); \(advice)"
    }
}

extension SQLiteError {
    /// A row that SQLite returned but Longlink cannot read (it was not written by Longlink, or is damaged).
    static func invalidRow(_ what: String) -> SQLiteError {
        SQLiteError(code: SQLITE_CORRUPT, message: what, operation: "read")
    }
}
