// What each ONNX node of an import becomes: folded away (constants and shape computations), an
// alias of its input (Identity, eval-form Dropout), or a forward node.
#pragma once

#include "onnx/import_state.h"

namespace remat::onnx_import {

// Whether a node holds a subgraph (control flow).
bool HasSubgraph(const onnx::NodeProto& node);

// Sets every tensor's origin (state.tensors_) and every node's role (state.roles_).
void ClassifyNodes(ImportState& state);

// The forward nodes: the activation nodes the first graph output depends on, in the file's
// (topological) order, so the node producing the output is the last one.
void SelectForwardNodes(ImportState& state);

// An InputError for a forward node without a cost rule, unless unknown operators cost 0 (then
// they are listed in the result).
void CheckOperators(ImportState& state);

}  // namespace remat::onnx_import
