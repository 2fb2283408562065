// Fixture.
#include "model/layers.h"
