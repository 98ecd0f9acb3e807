#include "CLonglinkSQLite.h"
