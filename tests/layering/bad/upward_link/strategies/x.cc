// Fixture.
#include "strategies/x.h"
