// The shared state of an ONNX import: element sizes, and the queries every step asks of it.
#include "onnx/import_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/errors.h"

namespace remat::onnx_import {

using onnx::TensorProto;

std::optional<int64_t> ElementBytes(int32_t data_type) {
  switch (data_type) {
    case TensorProto::BOOL:
    case TensorProto::INT8:
    case TensorProto::UINT8:
      return 1;
    case TensorProto::INT16:
    case TensorProto::UINT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      return 2;
    case TensorProto::FLOAT:
    case TensorProto::INT32:
    case TensorProto::UINT32:
      return 4;
    case TensorProto::DOUBLE:
    case TensorProto::INT64:
    case TensorProto::UINT64:
    case TensorProto::COMPLEX64:
      return 8;
    case TensorProto::COMPLEX128:
      return 16;
    default:
      return std::nullopt;  // UNDEFINED, STRING, or an unknown code
  }
}

bool IsFloating(int32_t data_type) {
  return data_type == TensorProto::FLOAT || data_type == TensorProto::DOUBLE ||
         data_type == TensorProto::FLOAT16 || data_type == TensorProto::BFLOAT16;
}

bool IsStandardDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

std::string OneLine(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  std::string compact;
  for (char c : text) {
    if (c == ' ' && !compact.empty() && compact.back() == ' ') continue;
    compact.push_back(c);
  }
  return compact;
}

void ImportState::Fail(const std::string& what) const {
  throw InputError(fmt::format("{}: {}", source_, what));
}

std::string ImportState::NodeName(int32_t index) const {
  const onnx::NodeProto& node = graph().node(index);
  if (!node.name().empty()) return node.name();
  if (node.output_size() > 0 && !node.output(0).empty()) return node.output(0);
  return fmt::format("#{}", index);
}

std::string ImportState::OpType(const onnx::NodeProto& node) const {
  return IsStandardDomain(node.domain()) ? node.op_type() : node.domain() + "." + node.op_type();
}

int64_t ImportState::ScaleBytes(int64_t bytes) const {
  if (result_.batch == reference_batch_) return bytes;
  const std::optional<int64_t> product = CheckedMul(bytes, result_.batch);
  if (!product || *product > std::numeric_limits<int64_t>::max() - reference_batch_) {
    Fail(fmt::format("a tensor is too large at batch {}", result_.batch));
  }
  return (*product + reference_batch_ - 1) / reference_batch_;
}

double ImportState::ScaleFlops(double flops) const {
  return flops * static_cast<double>(result_.batch) / static_cast<double>(reference_batch_);
}

std::optional<int> ImportState::KnownRank(const std::string& name) const {
  const auto it = types_.find(name);
  if (it == types_.end() || !it->second.has_tensor_type() ||
      !it->second.tensor_type().has_shape()) {
    return std::nullopt;
  }
  return it->second.tensor_type().shape().dim_size();
}

std::optional<Shape> ImportState::KnownShape(const std::string& name) const {
  const auto it = types_.find(name);
  if (it == types_.end() || !it->second.has_tensor_type()) return std::nullopt;
  const onnx::TypeProto_Tensor& type = it->second.tensor_type();
  if (!type.has_shape()) return std::nullopt;
  Shape shape;
  for (const onnx::TensorShapeProto_Dimension& dim : type.shape().dim()) {
    if (!dim.has_dim_value() || dim.dim_value() < 0) return std::nullopt;
    shape.push_back(dim.dim_value());
  }
  return shape;
}

int64_t ImportState::TensorBytes(const std::string& name, int32_t node_index) const {
  const std::optional<Shape> shape = KnownShape(name);
  const auto it = types_.find(name);
  if (!shape || it == types_.end()) {
    Fail(
        fmt::format("cannot size tensor '{}' (output of node '{}', {}): shape inference left "
                    "its shape unknown",
                    name, NodeName(node_index), OpType(graph().node(node_index))));
  }
  const std::optional<int64_t> element_bytes = ElementBytes(it->second.tensor_type().elem_type());
  if (!element_bytes) {
    Fail(fmt::format("tensor '{}' (node '{}') has an unsupported element type", name,
                     NodeName(node_index)));
  }
  const std::optional<int64_t> elements = CheckedElements(*shape);
  const std::optional<int64_t> bytes =
      elements ? CheckedMul(*elements, *element_bytes) : std::nullopt;
  if (!bytes) Fail(fmt::format("tensor '{}' is too large", name));
  return *bytes;
}

}  // namespace remat::onnx_import
