// core may not use solvers.
#pragma once
#include "solvers/cbc_mip.h"
