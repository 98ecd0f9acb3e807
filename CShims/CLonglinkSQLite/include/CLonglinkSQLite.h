// CLonglinkSQLite: the system SQLite (Debian's libsqlite3, 3.40) plus the few wrappers Swift needs because it
// cannot see C macros that are casts. Only LonglinkSQLite imports this module (`internal import`), so no sqlite3
// type or pointer leaves that adapter.
#pragma once
#include <sqlite3.h>

// SQLITE_TRANSIENT is `((sqlite3_destructor_type)-1)`, a cast macro: Swift reports "cannot find
// 'SQLITE_TRANSIENT' in scope". It tells SQLite to copy the bytes before the call returns, which is what Swift
// needs for buffers that only live inside `withUTF8` / `withUnsafeBytes` closures.
static inline int CLonglinkSQLite_bind_text_transient(sqlite3_stmt *stmt, int index, const char *text, int length) {
    return sqlite3_bind_text(stmt, index, text, length, SQLITE_TRANSIENT);
}

// Same as above for blobs (SQLITE_TRANSIENT is a cast macro Swift cannot import).
static inline int CLonglinkSQLite_bind_blob_transient(sqlite3_stmt *stmt, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(stmt, index, bytes, length, SQLITE_TRANSIENT);
}

// SQLITE_STATIC is `((sqlite3_destructor_type)0)`, also a cast macro. It tells SQLite the bytes outlive the
// statement's use of them, so nothing is copied: only for buffers with static storage (C string literals).
static inline int CLonglinkSQLite_bind_text_static(sqlite3_stmt *stmt, int index, const char *text, int length) {
    return sqlite3_bind_text(stmt, index, text, length, SQLITE_STATIC);
}

// sqlite3_db_config is variadic ("Variadic function is unavailable" in Swift). This fixed-argument wrapper sets
// one integer option (e.g. SQLITE_DBCONFIG_DEFENSIVE, which forbids writes that can corrupt the file through SQL
// such as `PRAGMA writable_schema`) and reports the value now in effect through `current`.
int CLonglinkSQLite_db_config_int(sqlite3 *db, int option, int value, int *current);

// sqlite3_config is variadic too. Called once before the first connection opens: turns off SQLite's global
// memory statistics (SQLITE_CONFIG_MEMSTATUS), which otherwise take a process-wide mutex around every
// allocation SQLite makes. Returns SQLITE_MISUSE when SQLite was already initialized (then nothing changes).
int CLonglinkSQLite_disable_memory_statistics(void);
