// A small tensor value that shape folding holds exactly, its conversions from and to ONNX
// tensors, and the element helpers the folded operators share.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
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

// The number of elements of `dims`, or nullopt when a dimension is negative or there are more
// than kMaxFoldedElements.
std::optional<int64_t> ElementCount(const Shape& dims);

// Whether an onnx::TensorProto::DataType is bool or an integer type, or float or double.
bool IsIntegerType(int32_t t);
bool IsRealType(int32_t t);

// Element `i` of `v` as a double, whatever its type.
double AsReal(const StaticValue& v, int64_t i);

// A double that fits int64 without undefined behaviour, or nullopt.
std::optional<int64_t> ToInt(double x);

// An empty value (no elements yet) of the given type and dimensions.
StaticValue Make(int32_t data_type, Shape dims);

}  // namespace remat::onnx_folding
