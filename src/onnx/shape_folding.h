// Evaluation of the small computations exporters emit to build shapes at run time (Shape ->
// Gather -> Div -> Cast -> Unsqueeze -> Concat -> Reshape, as PyTorch writes x.view(b, s, h, d)).
// ONNX 1.12's data propagation stops at Div and Cast of such chains, so the importer folds them
// itself and hands the values to shape inference as initializers of the nodes that read them.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/layers.h"
#include "onnx/static_value.h"

namespace remat::onnx_folding {

using ValueLookup = std::function<const StaticValue*(const std::string& name)>;
using ShapeLookup = std::function<std::optional<Shape>(const std::string& name)>;

// The single output of `node` computed from its inputs' values (and, for Shape and Size, from
// its input's inferred shape); nullopt when an input is unknown, the operator is not one of the
// folded ones, or the result would be invalid or too large. Never throws on bad data.
std::optional<StaticValue> EvaluateNode(const onnx::NodeProto& node, int64_t opset,
                                        const ValueLookup& value_of,
                                        const ShapeLookup& shape_of);

}  // namespace remat::onnx_folding
