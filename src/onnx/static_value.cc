// Static values: ONNX tensors and Constant attributes read into exact small values, and back.
#include "onnx/static_value.h"

#include <cmath>
#include <cstring>
#include <string>

namespace remat::onnx_folding {
namespace {

using onnx::TensorProto;

// Little-endian raw bytes to values of `width` bytes each.
template <typename T>
std::vector<T> FromRaw(const std::string& raw, int64_t count) {
  std::vector<T> out(static_cast<size_t>(count));
  if (count == 0) return out;  // memcpy to an empty vector's null data() is undefined
  std::memcpy(out.data(), raw.data(), static_cast<size_t>(count) * sizeof(T));
  return out;
}

}  // namespace

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

}  // namespace remat::onnx_folding
