// Fixture.
#include "onnx/x.h"
