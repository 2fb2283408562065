// Types and shapes of every tensor of an import, node by node: folded values where remat can
// compute them, onnx::shape_inference one node at a time elsewhere.
#pragma once

#include "onnx/import_state.h"

namespace remat::onnx_import {

// Shapes, node by node in the file's (topological) order, so that every node is looked at
// with its inputs' types known:
// - a folded node whose value remat can compute (onnx_folding: the shape arithmetic of
//   exports) gets that value and its type; ONNX 1.12's data propagation stops at the Div and
//   Cast of PyTorch's x.view(b, s, h // heads, ...) and reads out of bounds on a bad Gather
//   index (found by fuzzing), so remat does not use it;
// - every other node is checked (CheckWindowedOp) and given to onnx::shape_inference alone,
//   with its inputs' types and the known values of its inputs as initializers (a Reshape's
//   target, a Resize's scales);
// - an unknown operator costed 0 whose output ONNX cannot size takes the type of its first
//   sized activation input.
void InferShapes(ImportState& state);

}  // namespace remat::onnx_import
