#include "CLonglinkLinux.h"
