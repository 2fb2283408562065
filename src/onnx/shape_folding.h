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

namespace remat::onnx_folding {

// Folded values are small; larger ones are left to shape inference.
inline constexpr int64_t kMaxFoldedElements = 1024;

// A small tensor: integers (and booleans) are kept exactly, floating-point values as doubles.
struct StaticValue {
  int32_t data_type = 0;      // onnx::TensorProto::DataType
  Shape dims;                 // empty for a scalar
  std::vector<int64_t> ints;  // integer and boolean types
  std::vector<double> reals;  // floating-point types

  bool is_integer() const;
  int64_t size() const;
};

// The value a tensor holds, or nullopt when its type is not numeric, its data is absent or
// external, or it has more than kMaxFoldedElements elements.
std::optional<StaticValue> ValueOfTensor(const onnx::TensorProto& tensor);
// The value of a Constant node's attribute (value, value_int(s), value_float(s)), or nullopt.
std::optional<StaticValue> ValueOfConstant(const onnx::NodeProto& node);

onnx::TensorProto ToTensorProto(const StaticValue& value);

using ValueLookup = std::function<const StaticValue*(const std::string& name)>;
using ShapeLookup = std::function<std::optional<Shape>(const std::string& name)>;

// The single output of `node` computed from its inputs' values (and, for Shape and Size, from
// its input's inferred shape); nullopt when an input is unknown, the operator is not one of the
// folded ones, or the result would be invalid or too large. Never throws on bad data.
std::optional<StaticValue> EvaluateNode(const onnx::NodeProto& node, int64_t opset,
                                        const ValueLookup& value_of,
                                        const ShapeLookup& shape_of);

}  // namespace remat::onnx_folding
