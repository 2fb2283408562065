// Reading an ONNX model into an import: parsing, its parameters, onnx::checker, guards against
// attributes that crash ONNX's shape inference, and the batch.
#pragma once

#include <string_view>

#include "onnx/import_state.h"

namespace remat::onnx_import {

// Parses the bytes into state.model_ and reads the standard domain's opset.
void ParseModel(ImportState& state, std::string_view bytes);
// Records every initializer and constant as a parameter, and replaces initializers whose
// values remat does not need by typed graph inputs: the checker and shape inference then
// see only names, types and shapes, so stripped or external weights import the same way.
void CollectParameters(ImportState& state);
// onnx::checker, and at least one output.
void CheckModel(ImportState& state);
// ONNX 1.12's checker accepts a zero stride, dilation, group or block size, and its shape
// inference then divides by it (found by fuzzing: SIGFPE in convPoolShapeInference). Such
// nodes are rejected here, before inference runs.
void CheckSizeAttributes(const ImportState& state);
// The batch is the first dimension of the first graph input without an initializer. Other
// such inputs are data when their first dimension is the batch too (the same value, or the
// same symbol), and parameters otherwise: export_params=False lists the weights as inputs.
// A symbolic batch is set to the requested one before shape inference; a fixed one stays
// and sizes are rescaled later.
void FixBatch(ImportState& state);

}  // namespace remat::onnx_import
