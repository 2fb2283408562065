// The operators shape folding evaluates, on static values: elementwise arithmetic and
// comparisons, casts, and the data movement of shape vectors (gather, concat, slice, reshape).
// Each returns nullopt when its result would be invalid or larger than kMaxFoldedElements.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onnx/static_value.h"

namespace remat::onnx_folding {

// Add, Sub, Mul, Div, Mod (integer), Pow (floating point), Max, Min, the comparisons, And and
// Or, with numpy broadcasting; nullopt on integer overflow or an integer division by zero.
std::optional<StaticValue> Binary(const std::string& op, const StaticValue& a,
                                  const StaticValue& b);
// Neg, Abs, Floor, Ceil, Sqrt (floating point) and Not.
std::optional<StaticValue> Unary(const std::string& op, const StaticValue& a);
// Cast to the onnx::TensorProto::DataType `to`.
std::optional<StaticValue> Cast(const StaticValue& a, int32_t to);
// Where(condition, a, b) with numpy broadcasting.
std::optional<StaticValue> Where(const StaticValue& condition, const StaticValue& a,
                                 const StaticValue& b);
// Gather from a 1-D value along axis 0.
std::optional<StaticValue> Gather(const StaticValue& data, const StaticValue& indices,
                                  int64_t axis);
// Concatenation of 1-D values of one kind (integer or floating point).
std::optional<StaticValue> Concat(const std::vector<const StaticValue*>& inputs);
// Unsqueeze and Squeeze of `x` at `axes` (negative ones count from the end; Squeeze with no
// axes removes every dimension of 1).
std::optional<StaticValue> Unsqueeze(const StaticValue& x, const std::vector<int64_t>& axes);
std::optional<StaticValue> Squeeze(const StaticValue& x, const std::vector<int64_t>& axes);
// Slice of a 1-D value along axis 0 by ONNX's clamping rule.
std::optional<StaticValue> Slice(const StaticValue& data, int64_t start, int64_t end,
                                 int64_t step);
// The dimensions Reshape gives `in` for `target` (0 copies a dimension, -1 is inferred).
std::optional<Shape> Reshaped(const Shape& in, const std::vector<int64_t>& target);
// Range(start, limit, delta) of scalars.
std::optional<StaticValue> Range(const StaticValue& start_value, const StaticValue& limit_value,
                                 const StaticValue& delta_value);
// A value of dimensions `dims` with every element equal to the single element of `fill`.
std::optional<StaticValue> ConstantOfShape(const std::vector<int64_t>& dims,
                                           const StaticValue& fill);
// Expand: `x` broadcast to `target`.
std::optional<StaticValue> Expand(const StaticValue& x, const std::vector<int64_t>& target);

}  // namespace remat::onnx_folding
