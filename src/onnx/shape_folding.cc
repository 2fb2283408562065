// Folding of shape computations: a tiny interpreter for the integer operators exporters use to
// compute shapes, on tensors of at most kMaxFoldedElements elements.
#include "onnx/shape_folding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace remat::onnx_folding {
namespace {

using onnx::TensorProto;

std::optional<int64_t> ElementCount(const Shape& dims) {
  int64_t n = 1;
  for (const int64_t d : dims) {
    if (d < 0 || (d > 0 && n > kMaxFoldedElements / d)) return std::nullopt;
    n *= d;
  }
  return n;
}

bool IsIntegerType(int32_t t) {
  switch (t) {
    case TensorProto::BOOL:
    case TensorProto::INT8:
    case TensorProto::INT16:
    case TensorProto::INT32:
    case TensorProto::INT64:
    case TensorProto::UINT8:
    case TensorProto::UINT16:
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      return true;
    default:
      return false;
  }
}

bool IsRealType(int32_t t) { return t == TensorProto::FLOAT || t == TensorProto::DOUBLE; }

// Little-endian raw bytes to values of `width` bytes each.
template <typename T>
std::vector<T> FromRaw(const std::string& raw, int64_t count) {
  std::vector<T> out(static_cast<size_t>(count));
  if (count == 0) return out;  // memcpy to an empty vector's null data() is undefined
  std::memcpy(out.data(), raw.data(), static_cast<size_t>(count) * sizeof(T));
  return out;
}

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

double AsReal(const StaticValue& v, int64_t i) {
  return v.is_integer() ? static_cast<double>(v.ints[i]) : v.reals[i];
}

// A double that fits int64 without undefined behaviour, or nullopt.
std::optional<int64_t> ToInt(double x) {
  if (!std::isfinite(x) || x < -9.2e18 || x > 9.2e18) return std::nullopt;
  return static_cast<int64_t>(x);
}

StaticValue Make(int32_t data_type, Shape dims) {
  StaticValue v;
  v.data_type = data_type;
  v.dims = std::move(dims);
  return v;
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

// Numpy broadcasting of two shapes.
std::optional<Shape> Broadcast(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t da = k < rank - a.size() ? 1 : a[k - (rank - a.size())];
    const int64_t db = k < rank - b.size() ? 1 : b[k - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[k] = da == 1 ? db : da;
  }
  return out;
}

// The flat index into `in` (broadcast to `out`) of the flat index `i` of `out`.
int64_t BroadcastIndex(const Shape& in, const Shape& out, int64_t i) {
  int64_t index = 0;
  int64_t stride = 1;
  for (size_t k = out.size(); k-- > 0;) {
    const int64_t coordinate = i % out[k];
    i /= out[k];
    const size_t offset = out.size() - in.size();
    if (k >= offset) {
      const int64_t d = in[k - offset];
      if (d != 1) index += coordinate * stride;
      stride *= d;
    }
  }
  return index;
}

std::optional<StaticValue> Binary(const std::string& op, const StaticValue& a,
                                  const StaticValue& b) {
  const std::optional<Shape> dims = Broadcast(a.dims, b.dims);
  if (!dims) return std::nullopt;
  const std::optional<int64_t> n = ElementCount(*dims);
  if (!n) return std::nullopt;
  const bool compare = op == "Equal" || op == "Less" || op == "Greater" ||
                       op == "LessOrEqual" || op == "GreaterOrEqual";
  const bool logical = op == "And" || op == "Or";
  const bool integer = a.is_integer() && b.is_integer();
  StaticValue out = Make(compare || logical ? TensorProto::BOOL : a.data_type, *dims);
  for (int64_t i = 0; i < *n; ++i) {
    const int64_t ia = BroadcastIndex(a.dims, *dims, i);
    const int64_t ib = BroadcastIndex(b.dims, *dims, i);
    if (integer) {
      const int64_t x = a.ints[ia];
      const int64_t y = b.ints[ib];
      int64_t r = 0;
      if (op == "Add") {
        if (__builtin_add_overflow(x, y, &r)) return std::nullopt;
      } else if (op == "Sub") {
        if (__builtin_sub_overflow(x, y, &r)) return std::nullopt;
      } else if (op == "Mul") {
        if (__builtin_mul_overflow(x, y, &r)) return std::nullopt;
      } else if (op == "Div") {
        if (y == 0 || (x == std::numeric_limits<int64_t>::min() && y == -1)) return std::nullopt;
        r = x / y;
      } else if (op == "Mod") {
        if (y == 0 || (x == std::numeric_limits<int64_t>::min() && y == -1)) return std::nullopt;
        r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) r += y;  // the sign of the divisor (fmod = 0)
      } else if (op == "Max") {
        r = std::max(x, y);
      } else if (op == "Min") {
        r = std::min(x, y);
      } else if (op == "Equal") {
        r = x == y;
      } else if (op == "Less") {
        r = x < y;
      } else if (op == "Greater") {
        r = x > y;
      } else if (op == "LessOrEqual") {
        r = x <= y;
      } else if (op == "GreaterOrEqual") {
        r = x >= y;
      } else if (op == "And") {
        r = (x != 0) && (y != 0);
      } else if (op == "Or") {
        r = (x != 0) || (y != 0);
      } else {
        return std::nullopt;
      }
      out.ints.push_back(r);
    } else {
      const double x = AsReal(a, ia);
      const double y = AsReal(b, ib);
      double r = 0;
      if (op == "Add") {
        r = x + y;
      } else if (op == "Sub") {
        r = x - y;
      } else if (op == "Mul") {
        r = x * y;
      } else if (op == "Div") {
        r = x / y;
      } else if (op == "Pow") {
        r = std::pow(x, y);
      } else if (op == "Max") {
        r = std::max(x, y);
      } else if (op == "Min") {
        r = std::min(x, y);
      } else if (op == "Equal") {
        r = x == y;
      } else if (op == "Less") {
        r = x < y;
      } else if (op == "Greater") {
        r = x > y;
      } else if (op == "LessOrEqual") {
        r = x <= y;
      } else if (op == "GreaterOrEqual") {
        r = x >= y;
      } else {
        return std::nullopt;
      }
      if (compare) {
        out.ints.push_back(r != 0);
      } else if (out.is_integer()) {
        const std::optional<int64_t> as_int = ToInt(r);
        if (!as_int) return std::nullopt;
        out.ints.push_back(*as_int);
      } else {
        out.reals.push_back(r);
      }
    }
  }
  return out;
}

std::optional<StaticValue> Unary(const std::string& op, const StaticValue& a) {
  StaticValue out = a;
  if (op == "Not") {
    if (!a.is_integer()) return std::nullopt;
    out.data_type = TensorProto::BOOL;
    for (int64_t& x : out.ints) x = x == 0;
    return out;
  }
  if (a.is_integer()) {
    for (int64_t& x : out.ints) {
      if (x == std::numeric_limits<int64_t>::min()) return std::nullopt;
      if (op == "Neg") {
        x = -x;
      } else if (op == "Abs") {
        x = x < 0 ? -x : x;
      } else if (op != "Floor" && op != "Ceil") {
        return std::nullopt;
      }
    }
    return out;
  }
  for (double& x : out.reals) {
    if (op == "Neg") {
      x = -x;
    } else if (op == "Abs") {
      x = std::fabs(x);
    } else if (op == "Floor") {
      x = std::floor(x);
    } else if (op == "Ceil") {
      x = std::ceil(x);
    } else if (op == "Sqrt") {
      x = std::sqrt(x);
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::optional<StaticValue> Cast(const StaticValue& a, int32_t to) {
  StaticValue out = Make(to, a.dims);
  if (IsIntegerType(to)) {
    for (int64_t i = 0; i < a.size(); ++i) {
      if (a.is_integer()) {
        out.ints.push_back(to == TensorProto::BOOL ? a.ints[i] != 0 : a.ints[i]);
      } else {
        const std::optional<int64_t> x = ToInt(a.reals[i]);
        if (!x) return std::nullopt;
        out.ints.push_back(to == TensorProto::BOOL ? *x != 0 : *x);
      }
    }
    return out;
  }
  if (!IsRealType(to)) return std::nullopt;
  for (int64_t i = 0; i < a.size(); ++i) out.reals.push_back(AsReal(a, i));
  return out;
}

std::optional<StaticValue> Gather(const StaticValue& data, const StaticValue& indices,
                                  int64_t axis) {
  if (data.dims.size() != 1 || (axis != 0 && axis != -1) || !indices.is_integer()) {
    return std::nullopt;
  }
  const int64_t n = data.dims[0];
  StaticValue out = Make(data.data_type, indices.dims);
  for (int64_t index : indices.ints) {
    if (index < -n || index >= n) return std::nullopt;
    if (index < 0) index += n;
    if (data.is_integer()) {
      out.ints.push_back(data.ints[index]);
    } else {
      out.reals.push_back(data.reals[index]);
    }
  }
  return out;
}

std::optional<StaticValue> Concat(const std::vector<const StaticValue*>& inputs) {
  if (inputs.empty()) return std::nullopt;
  StaticValue out = Make(inputs[0]->data_type, {0});
  for (const StaticValue* v : inputs) {
    if (v->dims.size() != 1 || v->is_integer() != out.is_integer()) return std::nullopt;
    out.dims[0] += v->dims[0];
    out.ints.insert(out.ints.end(), v->ints.begin(), v->ints.end());
    out.reals.insert(out.reals.end(), v->reals.begin(), v->reals.end());
  }
  if (out.dims[0] > kMaxFoldedElements) return std::nullopt;
  return out;
}

// Slice of a 1-D value along axis 0 (the only axis shape vectors have). ONNX's rule: negative
// indices count from the end, then start and end are clamped to [0, n] when stepping forwards
// and to [0, n-1] and [-1, n-1] when stepping backwards.
std::optional<StaticValue> Slice(const StaticValue& data, int64_t start, int64_t end,
                                 int64_t step) {
  if (data.dims.size() != 1 || step == 0) return std::nullopt;
  const int64_t n = data.dims[0];
  StaticValue out = Make(data.data_type, {0});
  if (n == 0) return out;
  if (start < 0) start += n;  // n >= 0: no overflow
  if (end < 0) end += n;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, n);
    end = std::clamp<int64_t>(end, 0, n);
  } else {
    start = std::clamp<int64_t>(start, 0, n - 1);
    end = std::clamp<int64_t>(end, -1, n - 1);
  }
  for (int64_t i = start; step > 0 ? i < end : i > end;) {
    if (data.is_integer()) {
      out.ints.push_back(data.ints[i]);
    } else {
      out.reals.push_back(data.reals[i]);
    }
    ++out.dims[0];
    if (__builtin_add_overflow(i, step, &i)) break;
  }
  return out;
}

std::optional<Shape> Reshaped(const Shape& in, const std::vector<int64_t>& target) {
  const std::optional<int64_t> n = ElementCount(in);
  if (!n) return std::nullopt;
  Shape out;
  int64_t known = 1;
  int infer = -1;
  for (size_t k = 0; k < target.size(); ++k) {
    int64_t d = target[k];
    if (d == 0) {
      if (k >= in.size()) return std::nullopt;
      d = in[k];
    }
    if (d == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int>(k);
      out.push_back(1);
      continue;
    }
    if (d < 0 || (d > 0 && known > kMaxFoldedElements / d)) return std::nullopt;
    known *= d;
    out.push_back(d);
  }
  if (infer >= 0) {
    if (known == 0 || *n % known != 0) return std::nullopt;
    out[infer] = *n / known;
  } else if (known != *n) {
    return std::nullopt;
  }
  return out;
}

}  // namespace

bool StaticValue::is_integer() const { return IsIntegerType(data_type); }

int64_t StaticValue::size() const {
  return static_cast<int64_t>(is_integer() ? ints.size() : reals.size());
}

std::optional<StaticValue> ValueOfTensor(const TensorProto& tensor) {
  if (tensor.data_location() == TensorProto::EXTERNAL) return std::nullopt;
  const Shape dims(tensor.dims().begin(), tensor.dims().end());
  const std::optional<int64_t> n = ElementCount(dims);
  if (!n) return std::nullopt;
  StaticValue v = Make(tensor.data_type(), dims);
  const std::string& raw = tensor.raw_data();
  const bool has_raw = tensor.has_raw_data();
  auto raw_ok = [&](size_t width) { return raw.size() == static_cast<size_t>(*n) * width; };
  switch (tensor.data_type()) {
    case TensorProto::INT64:
      if (has_raw) {
        if (!raw_ok(8)) return std::nullopt;
        v.ints = FromRaw<int64_t>(raw, *n);
      } else {
        v.ints.assign(tensor.int64_data().begin(), tensor.int64_data().end());
      }
      break;
    case TensorProto::INT32:
      if (has_raw) {
        if (!raw_ok(4)) return std::nullopt;
        for (int32_t x : FromRaw<int32_t>(raw, *n)) v.ints.push_back(x);
      } else {
        v.ints.assign(tensor.int32_data().begin(), tensor.int32_data().end());
      }
      break;
    case TensorProto::BOOL:
    case TensorProto::UINT8:
    case TensorProto::INT8:
      if (has_raw) {
        if (!raw_ok(1)) return std::nullopt;
        for (int64_t i = 0; i < *n; ++i) {
          const auto byte = static_cast<unsigned char>(raw[static_cast<size_t>(i)]);
          v.ints.push_back(tensor.data_type() == TensorProto::INT8
                               ? static_cast<int64_t>(static_cast<signed char>(byte))
                               : static_cast<int64_t>(byte));
        }
      } else {
        v.ints.assign(tensor.int32_data().begin(), tensor.int32_data().end());
      }
      break;
    case TensorProto::FLOAT:
      if (has_raw) {
        if (!raw_ok(4)) return std::nullopt;
        for (float x : FromRaw<float>(raw, *n)) v.reals.push_back(x);
      } else {
        v.reals.assign(tensor.float_data().begin(), tensor.float_data().end());
      }
      break;
    case TensorProto::DOUBLE:
      if (has_raw) {
        if (!raw_ok(8)) return std::nullopt;
        v.reals = FromRaw<double>(raw, *n);
      } else {
        v.reals.assign(tensor.double_data().begin(), tensor.double_data().end());
      }
      break;
    default:
      return std::nullopt;
  }
  if (v.size() != *n) return std::nullopt;
  return v;
}

std::optional<StaticValue> ValueOfConstant(const onnx::NodeProto& node) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.name() == "value" && attr.has_t()) return ValueOfTensor(attr.t());
    if (attr.name() == "value_int") {
      StaticValue v = Make(TensorProto::INT64, {});
      v.ints = {attr.i()};
      return v;
    }
    if (attr.name() == "value_ints" && attr.ints_size() <= kMaxFoldedElements) {
      StaticValue v = Make(TensorProto::INT64, {attr.ints_size()});
      v.ints.assign(attr.ints().begin(), attr.ints().end());
      return v;
    }
    if (attr.name() == "value_float") {
      StaticValue v = Make(TensorProto::FLOAT, {});
      v.reals = {attr.f()};
      return v;
    }
    if (attr.name() == "value_floats" && attr.floats_size() <= kMaxFoldedElements) {
      StaticValue v = Make(TensorProto::FLOAT, {attr.floats_size()});
      v.reals.assign(attr.floats().begin(), attr.floats().end());
      return v;
    }
  }
  return std::nullopt;
}

TensorProto ToTensorProto(const StaticValue& value) {
  TensorProto tensor;
  tensor.set_data_type(value.data_type);
  for (const int64_t d : value.dims) tensor.add_dims(d);
  switch (value.data_type) {
    case TensorProto::INT64:
      for (const int64_t x : value.ints) tensor.add_int64_data(x);
      break;
    case TensorProto::UINT32:
    case TensorProto::UINT64:
      for (const int64_t x : value.ints) tensor.add_uint64_data(static_cast<uint64_t>(x));
      break;
    case TensorProto::FLOAT:
      for (const double x : value.reals) tensor.add_float_data(static_cast<float>(x));
      break;
    case TensorProto::DOUBLE:
      for (const double x : value.reals) tensor.add_double_data(x);
      break;
    default:  // the other integer types and bool are stored as int32
      for (const int64_t x : value.ints) tensor.add_int32_data(static_cast<int32_t>(x));
      break;
  }
  return tensor;
}

std::optional<StaticValue> EvaluateNode(const onnx::NodeProto& node, int64_t opset,
                                        const ValueLookup& value_of,
                                        const ShapeLookup& shape_of) {
  if (node.output_size() != 1 || (!node.domain().empty() && node.domain() != "ai.onnx")) {
    return std::nullopt;
  }
  const std::string& op = node.op_type();
  if (op == "Constant") return ValueOfConstant(node);
  if (op == "Shape" || op == "Size") {
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
  // Every other folded operator needs the values of its present inputs.
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
    if (in.size() != 3 || input(1) == nullptr || input(2) == nullptr || !x.is_integer() ||
        input(1)->is_integer() != input(2)->is_integer()) {
      return std::nullopt;
    }
    const StaticValue& a = *input(1);
    const StaticValue& b = *input(2);
    std::optional<Shape> dims = Broadcast(x.dims, a.dims);
    if (dims) dims = Broadcast(*dims, b.dims);
    const std::optional<int64_t> n = dims ? ElementCount(*dims) : std::nullopt;
    if (!n) return std::nullopt;
    StaticValue out = Make(a.data_type, *dims);
    for (int64_t i = 0; i < *n; ++i) {
      const bool pick_a = x.ints[BroadcastIndex(x.dims, *dims, i)] != 0;
      const StaticValue& from = pick_a ? a : b;
      const int64_t j = BroadcastIndex(from.dims, *dims, i);
      if (out.is_integer()) {
        out.ints.push_back(from.ints[j]);
      } else {
        out.reals.push_back(from.reals[j]);
      }
    }
    return out;
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
    StaticValue out = x;
    if (op == "Unsqueeze") {
      const auto rank = static_cast<int64_t>(x.dims.size() + axes->size());
      std::vector<bool> inserted(static_cast<size_t>(rank), false);
      for (int64_t a : *axes) {
        if (a < -rank || a >= rank) return std::nullopt;
        if (a < 0) a += rank;
        if (inserted[a]) return std::nullopt;
        inserted[a] = true;
      }
      out.dims.clear();
      size_t next = 0;
      for (int64_t k = 0; k < rank; ++k) out.dims.push_back(inserted[k] ? 1 : x.dims[next++]);
      return out;
    }
    const auto rank = static_cast<int64_t>(x.dims.size());
    std::vector<bool> removed(static_cast<size_t>(rank), axes->empty());
    for (int64_t a : *axes) {
      if (a < -rank || a >= rank) return std::nullopt;
      if (a < 0) a += rank;
      removed[a] = true;
    }
    out.dims.clear();
    for (int64_t k = 0; k < rank; ++k) {
      if (removed[k] && x.dims[k] != 1) {
        if (!axes->empty()) return std::nullopt;
        removed[k] = false;
      }
      if (!removed[k]) out.dims.push_back(x.dims[k]);
    }
    return out;
  }
  if (op == "Slice") {
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
    return Slice(x, start, end, step);
  }
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
    const double start = AsReal(x, 0);
    const double limit = AsReal(*input(1), 0);
    const double delta = AsReal(*input(2), 0);
    if (x.size() != 1 || input(1)->size() != 1 || input(2)->size() != 1 || delta == 0) {
      return std::nullopt;
    }
    const double count = std::max(std::ceil((limit - start) / delta), 0.0);
    if (!(count <= kMaxFoldedElements)) return std::nullopt;
    const auto n = static_cast<int64_t>(count);
    StaticValue out = Make(x.data_type, {n});
    for (int64_t i = 0; i < n; ++i) {
      const double value = start + static_cast<double>(i) * delta;
      if (out.is_integer()) {
        const std::optional<int64_t> as_int = ToInt(value);
        if (!as_int) return std::nullopt;
        out.ints.push_back(*as_int);
      } else {
        out.reals.push_back(value);
      }
    }
    return out;
  }
  if (op == "ConstantOfShape") {
    const std::optional<std::vector<int64_t>> dims = IntList(&x);
    if (!dims || x.dims.size() != 1) return std::nullopt;
    const std::optional<int64_t> n = ElementCount(*dims);
    if (!n) return std::nullopt;
    StaticValue fill = Make(TensorProto::FLOAT, {});
    fill.reals = {0.0};
    if (const onnx::AttributeProto* attr = FindAttribute(node, "value"); attr && attr->has_t()) {
      const std::optional<StaticValue> v = ValueOfTensor(attr->t());
      if (!v || v->size() != 1) return std::nullopt;
      fill = *v;
    }
    StaticValue out = Make(fill.data_type, *dims);
    if (out.is_integer()) {
      out.ints.assign(static_cast<size_t>(*n), fill.ints[0]);
    } else {
      out.reals.assign(static_cast<size_t>(*n), fill.reals[0]);
    }
    return out;
  }
  if (op == "Expand") {
    const std::optional<std::vector<int64_t>> target = IntList(input(1));
    if (!target) return std::nullopt;
    const std::optional<Shape> dims = Broadcast(x.dims, *target);
    const std::optional<int64_t> n = dims ? ElementCount(*dims) : std::nullopt;
    if (!n) return std::nullopt;
    StaticValue out = Make(x.data_type, *dims);
    for (int64_t i = 0; i < *n; ++i) {
      const int64_t j = BroadcastIndex(x.dims, *dims, i);
      if (out.is_integer()) {
        out.ints.push_back(x.ints[j]);
      } else {
        out.reals.push_back(x.reals[j]);
      }
    }
    return out;
  }
  return std::nullopt;
}

}  // namespace remat::onnx_folding
