#include "CLonglinkSQLite.h"

int CLonglinkSQLite_db_config_int(sqlite3 *db, int option, int value, int *current) {
    return sqlite3_db_config(db, option, value, current);
}

int CLonglinkSQLite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
