// Fixture.
#include "core/graph.h"
