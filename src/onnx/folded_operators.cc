// The folded operators: a tiny interpreter for the integer arithmetic exporters use to compute
// shapes, on tensors of at most kMaxFoldedElements elements.
#include "onnx/folded_operators.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace remat::onnx_folding {
namespace {

using onnx::TensorProto;

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

// One element of an integer Binary; nullopt on overflow, a zero divisor, or an operator that
// is not folded on integers.
std::optional<int64_t> IntegerBinary(const std::string& op, int64_t x, int64_t y) {
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
  return r;
}

// One element of a floating-point Binary (a comparison gives 0 or 1), or nullopt for an
// operator that is not folded.
std::optional<double> RealBinary(const std::string& op, double x, double y) {
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
  return r;
}

}  // namespace

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
      const std::optional<int64_t> r = IntegerBinary(op, a.ints[ia], b.ints[ib]);
      if (!r) return std::nullopt;
      out.ints.push_back(*r);
    } else {
      const std::optional<double> r = RealBinary(op, AsReal(a, ia), AsReal(b, ib));
      if (!r) return std::nullopt;
      if (compare) {
        out.ints.push_back(*r != 0);
      } else if (out.is_integer()) {
        const std::optional<int64_t> as_int = ToInt(*r);
        if (!as_int) return std::nullopt;
        out.ints.push_back(*as_int);
      } else {
        out.reals.push_back(*r);
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

std::optional<StaticValue> Where(const StaticValue& x, const StaticValue& a,
                                 const StaticValue& b) {
  if (!x.is_integer() || a.is_integer() != b.is_integer()) return std::nullopt;
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

std::optional<StaticValue> Unsqueeze(const StaticValue& x, const std::vector<int64_t>& axes) {
  StaticValue out = x;
  const auto rank = static_cast<int64_t>(x.dims.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
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

std::optional<StaticValue> Squeeze(const StaticValue& x, const std::vector<int64_t>& axes) {
  StaticValue out = x;
  const auto rank = static_cast<int64_t>(x.dims.size());
  std::vector<bool> removed(static_cast<size_t>(rank), axes.empty());
  for (int64_t a : axes) {
    if (a < -rank || a >= rank) return std::nullopt;
    if (a < 0) a += rank;
    removed[a] = true;
  }
  out.dims.clear();
  for (int64_t k = 0; k < rank; ++k) {
    if (removed[k] && x.dims[k] != 1) {
      if (!axes.empty()) return std::nullopt;
      removed[k] = false;
    }
    if (!removed[k]) out.dims.push_back(x.dims[k]);
  }
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

std::optional<StaticValue> Range(const StaticValue& start_value, const StaticValue& limit_value,
                                 const StaticValue& delta_value) {
  const double start = AsReal(start_value, 0);
  const double limit = AsReal(limit_value, 0);
  const double delta = AsReal(delta_value, 0);
  if (start_value.size() != 1 || limit_value.size() != 1 || delta_value.size() != 1 ||
      delta == 0) {
    return std::nullopt;
  }
  const double count = std::max(std::ceil((limit - start) / delta), 0.0);
  if (!(count <= kMaxFoldedElements)) return std::nullopt;
  const auto n = static_cast<int64_t>(count);
  StaticValue out = Make(start_value.data_type, {n});
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

std::optional<StaticValue> ConstantOfShape(const std::vector<int64_t>& dims,
                                           const StaticValue& fill) {
  const std::optional<int64_t> n = ElementCount(dims);
  if (!n) return std::nullopt;
  StaticValue out = Make(fill.data_type, dims);
  if (out.is_integer()) {
    out.ints.assign(static_cast<size_t>(*n), fill.ints[0]);
  } else {
    out.reals.assign(static_cast<size_t>(*n), fill.reals[0]);
  }
  return out;
}

std::optional<StaticValue> Expand(const StaticValue& x, const std::vector<int64_t>& target) {
  const std::optional<Shape> dims = Broadcast(x.dims, target);
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

}  // namespace remat::onnx_folding
