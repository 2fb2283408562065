// Folding of shape computations: which folded operator a node is, read from its attributes and
// its inputs' values and inferred shapes.
#include "onnx/shape_folding.h"

#include <algorithm>

#include "onnx/folded_operators.h"

namespace remat::onnx_folding {
namespace {

using onnx::TensorProto;

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const char* name) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

int64_t IntAttribute(const onnx::NodeProto& node, const char* name, int64_t fallback) {
  const onnx::AttributeProto* attr = FindAttribute(node, name);
  return attr != nullptr ? attr->i() : fallback;
}

// The values of a 1-D (or scalar) integer input, e.g. axes or starts.
std::optional<std::vector<int64_t>> IntList(const StaticValue* v) {
  if (v == nullptr || !v->is_integer() || v->dims.size() > 1) return std::nullopt;
  return v->ints;
}

std::optional<std::vector<int64_t>> AxesOf(const onnx::NodeProto& node, int64_t opset,
                                           const ValueLookup& value_of) {
  if (opset >= 13) {
    if (node.input_size() < 2 || node.input(1).empty()) return std::vector<int64_t>{};
    return IntList(value_of(node.input(1)));
  }
  const onnx::AttributeProto* attr = FindAttribute(node, "axes");
  if (attr == nullptr) return std::vector<int64_t>{};
  return std::vector<int64_t>(attr->ints().begin(), attr->ints().end());
}

// Shape (the dimensions from its `start` to its `end` attribute) or Size of the input's
// inferred shape.
std::optional<StaticValue> ShapeOrSize(const onnx::NodeProto& node, const ShapeLookup& shape_of) {
  const std::string& op = node.op_type();
  if (node.input_size() < 1) return std::nullopt;
  const std::optional<Shape> shape = shape_of(node.input(0));
  if (!shape) return std::nullopt;
  if (op == "Size") {
    int64_t n = 1;
    for (const int64_t d : *shape) {
      if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
    }
    StaticValue v = Make(TensorProto::INT64, {});
    v.ints = {n};
    return v;
  }
  const auto rank = static_cast<int64_t>(shape->size());
  int64_t start = IntAttribute(node, "start", 0);
  int64_t end = IntAttribute(node, "end", rank);
  if (start < 0) start = std::max<int64_t>(start + rank, 0);
  if (end < 0) end = std::max<int64_t>(end + rank, 0);
  start = std::min(start, rank);
  end = std::clamp(end, start, rank);
  StaticValue v = Make(TensorProto::INT64, {end - start});
  v.ints.assign(shape->begin() + start, shape->begin() + end);
  return v;
}

// The values of the node's inputs, nullptr for an absent optional one; nullopt when a present
// input's value is unknown.
std::optional<std::vector<const StaticValue*>> InputValues(const onnx::NodeProto& node,
                                                           const ValueLookup& value_of) {
  std::vector<const StaticValue*> in;
  for (const std::string& name : node.input()) {
    if (name.empty()) {
      in.push_back(nullptr);
      continue;
    }
    const StaticValue* v = value_of(name);
    if (v == nullptr) return std::nullopt;
    in.push_back(v);
  }
  return in;
}

// Slice's start, end and step, from its inputs (opset >= 10) or its attributes, then the slice.
std::optional<StaticValue> SliceNode(const onnx::NodeProto& node, int64_t opset,
                                     const std::vector<const StaticValue*>& in) {
  auto input = [&](size_t k) -> const StaticValue* { return k < in.size() ? in[k] : nullptr; };
  int64_t start = 0;
  int64_t end = 0;
  int64_t step = 1;
  if (opset >= 10) {
    const std::optional<std::vector<int64_t>> starts = IntList(input(1));
    const std::optional<std::vector<int64_t>> ends = IntList(input(2));
    if (!starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
    if (input(3) != nullptr) {
      const std::optional<std::vector<int64_t>> axes = IntList(input(3));
      if (!axes || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) {
        return std::nullopt;
      }
    }
    if (input(4) != nullptr) {
      const std::optional<std::vector<int64_t>> steps = IntList(input(4));
      if (!steps || steps->size() != 1) return std::nullopt;
      step = (*steps)[0];
    }
    start = (*starts)[0];
    end = (*ends)[0];
  } else {
    const onnx::AttributeProto* starts = FindAttribute(node, "starts");
    const onnx::AttributeProto* ends = FindAttribute(node, "ends");
    if (starts == nullptr || ends == nullptr || starts->ints_size() != 1 ||
        ends->ints_size() != 1) {
      return std::nullopt;
    }
    start = starts->ints(0);
    end = ends->ints(0);
  }
  return Slice(*input(0), start, end, step);
}

// ConstantOfShape's fill: the single element of its `value` attribute, or a float 0.
std::optional<StaticValue> FillValue(const onnx::NodeProto& node) {
  StaticValue fill = Make(TensorProto::FLOAT, {});
  fill.reals = {0.0};
  if (const onnx::AttributeProto* attr = FindAttribute(node, "value"); attr && attr->has_t()) {
    const std::optional<StaticValue> v = ValueOfTensor(attr->t());
    if (!v || v->size() != 1) return std::nullopt;
    fill = *v;
  }
  return fill;
}

}  // namespace

std::optional<StaticValue> EvaluateNode(const onnx::NodeProto& node, int64_t opset,
                                        const ValueLookup& value_of,
                                        const ShapeLookup& shape_of) {
  if (node.output_size() != 1 || (!node.domain().empty() && node.domain() != "ai.onnx")) {
    return std::nullopt;
  }
  const std::string& op = node.op_type();
  if (op == "Constant") return ValueOfConstant(node);
  if (op == "Shape" || op == "Size") return ShapeOrSize(node, shape_of);
  // Every other folded operator needs the values of its present inputs.
  const std::optional<std::vector<const StaticValue*>> values = InputValues(node, value_of);
  if (!values) return std::nullopt;
  const std::vector<const StaticValue*>& in = *values;
  auto input = [&](size_t k) -> const StaticValue* { return k < in.size() ? in[k] : nullptr; };
  if (input(0) == nullptr) return std::nullopt;
  const StaticValue& x = *input(0);

  if (op == "Identity") return x;
  if (op == "Cast") return Cast(x, static_cast<int32_t>(IntAttribute(node, "to", 0)));
  if (op == "Neg" || op == "Abs" || op == "Floor" || op == "Ceil" || op == "Sqrt" ||
      op == "Not") {
    return Unary(op, x);
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Mod" ||
      op == "Pow" || op == "Max" || op == "Min" || op == "Equal" || op == "Less" ||
      op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual" || op == "And" ||
      op == "Or") {
    if (in.size() != 2 || input(1) == nullptr) return std::nullopt;
    if (op == "Mod" && IntAttribute(node, "fmod", 0) != 0) return std::nullopt;
    return Binary(op, x, *input(1));
  }
  if (op == "Where") {
    if (in.size() != 3 || input(1) == nullptr || input(2) == nullptr) return std::nullopt;
    return Where(x, *input(1), *input(2));
  }
  if (op == "Gather") {
    if (in.size() != 2 || input(1) == nullptr) return std::nullopt;
    return Gather(x, *input(1), IntAttribute(node, "axis", 0));
  }
  if (op == "Concat") {
    if (std::find(in.begin(), in.end(), nullptr) != in.end()) return std::nullopt;
    return Concat(in);
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    const std::optional<std::vector<int64_t>> axes = AxesOf(node, opset, value_of);
    if (!axes) return std::nullopt;
    return op == "Unsqueeze" ? Unsqueeze(x, *axes) : Squeeze(x, *axes);
  }
  if (op == "Slice") return SliceNode(node, opset, in);
  if (op == "Reshape") {
    const std::optional<std::vector<int64_t>> target = IntList(input(1));
    if (!target) return std::nullopt;
    const std::optional<Shape> dims = Reshaped(x.dims, *target);
    if (!dims) return std::nullopt;
    StaticValue out = x;
    out.dims = *dims;
    return out;
  }
  if (op == "Range") {
    if (in.size() != 3 || input(1) == nullptr || input(2) == nullptr) return std::nullopt;
    return Range(x, *input(1), *input(2));
  }
  if (op == "ConstantOfShape") {
    const std::optional<std::vector<int64_t>> dims = IntList(&x);
    const std::optional<StaticValue> fill = FillValue(node);
    if (!dims || x.dims.size() != 1 || !fill) return std::nullopt;
    return ConstantOfShape(*dims, *fill);
  }
  if (op == "Expand") {
    const std::optional<std::vector<int64_t>> target = IntList(input(1));
    if (!target) return std::nullopt;
    return Expand(x, *target);
  }
  return std::nullopt;
}

}  // namespace remat::onnx_folding
