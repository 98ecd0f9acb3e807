#include "CLonglinkProto.h"
