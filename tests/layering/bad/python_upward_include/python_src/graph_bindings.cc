// Fixture.
#include "graph_bindings.h"
