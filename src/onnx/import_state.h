// What an ONNX import has learned so far, shared by its steps (model_reading, node_roles,
// tensor_types, forward_conversion): the model, where each tensor comes from, the tensors' types
// and folded values, and the result being filled; with the element sizes and checked arithmetic
// those steps size tensors by.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "onnx/onnx_import.h"
#include "onnx/static_value.h"
#include "model/layers.h"

namespace remat::onnx_import {

// Bytes of one element of an onnx::TensorProto::DataType, or nullopt for strings and unknown
// codes.
std::optional<int64_t> ElementBytes(int32_t data_type);

// Whether a data type is a floating-point one (float, double, float16, bfloat16).
bool IsFloating(int32_t data_type);

// Whether an operator domain is ONNX's standard one ("" or "ai.onnx").
bool IsStandardDomain(const std::string& domain);

// a * b, or nullopt on int64 overflow.
std::optional<int64_t> CheckedMul(int64_t a, int64_t b);

// The product of `dims`, or nullopt when a dimension is negative or the product overflows.
template <typename Dims>
std::optional<int64_t> CheckedElements(const Dims& dims) {
  int64_t n = 1;
  for (const int64_t d : dims) {
    if (d < 0) return std::nullopt;
    const std::optional<int64_t> next = CheckedMul(n, d);
    if (!next) return std::nullopt;
    n = *next;
  }
  return n;
}

// `text` on one line: newlines become spaces, runs of spaces one space (for ONNX's messages).
std::string OneLine(std::string text);

// How a tensor's value arises.
enum class Origin {
  kStatic,      // initializers, constants and whatever is computed from them and from shapes
  kData,        // a graph input without an initializer: part of the input batch
  kActivation,  // computed by a node from data: an output of a forward node
};

struct TensorInfo {
  Origin origin = Origin::kStatic;
  int32_t producer = -1;  // the ONNX node (index in the graph) of an activation
};

enum class NodeRole { kFolded, kAlias, kActivation };

// The import's state. The steps fill it in order; every problem with the file is reported by
// Fail, which names the source.
struct ImportState {
  ImportState(std::string source, const OnnxImportOptions& options)
      : source_(std::move(source)), options_(options) {}

  [[noreturn]] void Fail(const std::string& what) const;

  const onnx::GraphProto& graph() const { return model_.graph(); }

  // The node's name, else its first output's, else "#index".
  std::string NodeName(int32_t index) const;
  // "Conv", or "domain.Op" outside the standard domain.
  std::string OpType(const onnx::NodeProto& node) const;

  // Bytes measured at the reference batch, at the requested batch (rounded up when a tensor
  // does not carry the batch evenly).
  int64_t ScaleBytes(int64_t bytes) const;
  double ScaleFlops(double flops) const;

  // The rank of a tensor whose type is known so far, or nullopt.
  std::optional<int> KnownRank(const std::string& name) const;
  // The fully known shape of a tensor, or nullopt.
  std::optional<Shape> KnownShape(const std::string& name) const;
  // Bytes of a tensor at the reference batch, or an InputError naming it and its node.
  int64_t TensorBytes(const std::string& name, int32_t node_index) const;

  std::string source_;
  OnnxImportOptions options_;
  onnx::ModelProto model_;
  int64_t opset_ = 0;
  int64_t reference_batch_ = 1;                  // the batch shapes are inferred at
  std::set<std::string> parameter_names_;        // initializers and weight inputs
  std::set<std::string> batch_norm_statistics_;  // running means and variances
  // Values shape computations may read.
  std::map<std::string, onnx::TensorProto> small_constants_;
  std::map<std::string, onnx_folding::StaticValue> values_;  // folded tensors' values
  std::vector<std::string> data_inputs_;
  std::unordered_map<std::string, TensorInfo> tensors_;
  std::unordered_map<std::string, onnx::TypeProto> types_;  // tensor types known so far
  std::vector<NodeRole> roles_;
  std::vector<int32_t> forward_nodes_;  // ONNX node indices, in forward order
  std::vector<int32_t> forward_id_;     // ONNX node index -> forward node, or -1
  ImportedOnnxModel result_;
};

}  // namespace remat::onnx_import
