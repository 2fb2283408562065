// The last step of an ONNX import: the classified, sized nodes become a forward graph with
// bytes, forward and backward costs and workspace, and the result's totals are filled in.
#pragma once

#include "onnx/import_state.h"

namespace remat::onnx_import {

// Builds state.result_.forward (named "<file stem> (onnx, batch N)") and the result's per-node
// operator types and FLOPs, input bytes and file metadata; returns the result, moved out.
ImportedOnnxModel ConvertToForwardGraph(ImportState& state);

}  // namespace remat::onnx_import
