// onnx may not use zoo: the importer needs only the model layer.
#pragma once
#include "zoo/registry.h"
