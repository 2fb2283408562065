// Shape inference for an import: the initializers' and declared types, folded shape
// computations, and onnx::shape_inference on single nodes after checks that keep it from crashing.
#include "onnx/tensor_types.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <fmt/format.h>

#include <set>

#include "onnx/node_roles.h"
#include "onnx/operator_costs.h"
#include "onnx/shape_folding.h"

namespace remat::onnx_import {
namespace {

using onnx::TensorProto;

// onnx::shape_inference on a graph of this one node; its outputs' types go to state.types_.
void InferNode(ImportState& state, int32_t index,
               const std::unordered_map<std::string, int>& opsets) {
  const onnx::NodeProto& node = state.graph().node(index);
  onnx::GraphProto single;
  *single.add_node() = node;
  std::set<std::string> declared;
  for (const std::string& input : node.input()) {
    if (input.empty() || !declared.insert(input).second) continue;
    const auto type = state.types_.find(input);
    if (type != state.types_.end()) {
      onnx::ValueInfoProto* value = single.add_input();
      value->set_name(input);
      *value->mutable_type() = type->second;
    }
    if (const auto value = state.values_.find(input); value != state.values_.end()) {
      TensorProto tensor = onnx_folding::ToTensorProto(value->second);
      tensor.set_name(input);
      *single.add_initializer() = std::move(tensor);
    }
  }
  for (const std::string& output : node.output()) {
    const auto type = state.types_.find(output);  // declared in the file
    if (output.empty() || type == state.types_.end()) continue;
    onnx::ValueInfoProto* value = single.add_value_info();
    value->set_name(output);
    *value->mutable_type() = type->second;
  }
  try {
    // Strict (errors are thrown) and type-checked; ONNX's data propagation stays off.
    const onnx::ShapeInferenceOptions options(/*check_type_val=*/true, /*strict_mode_val=*/1,
                                              /*data_prop_val=*/false);
    onnx::shape_inference::InferShapes(&single, opsets, onnx::OpSchemaRegistry::Instance(),
                                       options);
  } catch (const std::exception& error) {
    state.Fail(fmt::format("shape inference failed at node '{}' ({}): {}", state.NodeName(index),
                           state.OpType(node), OneLine(error.what())));
  }
  for (const onnx::ValueInfoProto& value : single.value_info()) {
    state.types_.insert_or_assign(value.name(), value.type());
  }
}

// For an unknown operator costed 0: its outputs are assumed to be like its first sized
// activation input. Without one they stay unknown and are reported when sized.
void AssumeOutputTypes(ImportState& state, const onnx::NodeProto& node) {
  for (const std::string& input : node.input()) {
    if (input.empty() || state.tensors_.at(input).origin == Origin::kStatic ||
        !state.KnownShape(input)) {
      continue;
    }
    const onnx::TypeProto like = state.types_.at(input);
    for (const std::string& output : node.output()) {
      if (!output.empty()) state.types_.insert_or_assign(output, like);
    }
    return;
  }
}

// ONNX 1.12's convolution and pooling shape inference index dimensions by the weight's rank
// and the attribute lists without checking them: the fuzzer found a null dereference in
// convTransposeShapeInference on a rank-0 weight, and a rank-5 weight on a rank-4 input
// crashes Conv's. A node's input ranks are known when it is reached, so they are checked here
// first.
void CheckWindowedOp(const ImportState& state, int32_t index) {
  static const std::set<std::string> kWindowed = {"Conv", "ConvTranspose", "MaxPool", "AveragePool",
                                                  "LpPool"};
  const onnx::NodeProto& node = state.graph().node(index);
  if (!IsStandardDomain(node.domain()) || kWindowed.count(node.op_type()) == 0) return;
  const std::optional<int> rank =
      node.input_size() > 0 ? state.KnownRank(node.input(0)) : std::nullopt;
  if (!rank) return;  // ONNX infers nothing without it
  if (*rank < 3) {
    state.Fail(
        fmt::format("node '{}' ({}) reads a tensor of rank {}; it needs batch, channels and "
                    "at least one spatial dimension",
                    state.NodeName(index), state.OpType(node), *rank));
  }
  const bool convolution = node.op_type() == "Conv" || node.op_type() == "ConvTranspose";
  if (convolution && node.input_size() > 1) {
    const std::optional<int> weight_rank = state.KnownRank(node.input(1));
    if (weight_rank && *weight_rank != *rank) {
      state.Fail(fmt::format("node '{}' ({}) has a weight '{}' of rank {} for an input of rank {}",
                             state.NodeName(index), state.OpType(node), node.input(1), *weight_rank,
                             *rank));
    }
  }
  const int spatial = *rank - 2;
  for (const onnx::AttributeProto& attr : node.attribute()) {
    const std::string& name = attr.name();
    const bool per_axis = name == "strides" || name == "dilations" || name == "kernel_shape" ||
                          name == "output_padding";
    const int expected = per_axis ? spatial : name == "pads" ? 2 * spatial : -1;
    if (expected >= 0 && attr.ints_size() != expected) {
      state.Fail(fmt::format("node '{}' ({}) has {} values of {} for {} spatial dimensions",
                             state.NodeName(index), state.OpType(node), attr.ints_size(), name,
                             spatial));
    }
  }
}

}  // namespace

void InferShapes(ImportState& state) {
  const onnx::GraphProto& g = state.graph();
  for (const TensorProto& tensor : g.initializer()) {
    onnx::TypeProto_Tensor* type = state.types_[tensor.name()].mutable_tensor_type();
    type->set_elem_type(tensor.data_type());
    onnx::TensorShapeProto* shape = type->mutable_shape();  // present for scalars too
    for (const int64_t d : tensor.dims()) shape->add_dim()->set_dim_value(d);
    if (std::optional<onnx_folding::StaticValue> v = onnx_folding::ValueOfTensor(tensor)) {
      state.values_.emplace(tensor.name(), std::move(*v));
    }
  }
  // Declared types: inputs (the batch fixed), and value_info and outputs, which inference
  // merges with what it finds at their producers.
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()}) {
    for (const onnx::ValueInfoProto& value : *list) {
      if (value.type().has_tensor_type()) state.types_.emplace(value.name(), value.type());
    }
  }
  std::unordered_map<std::string, int> opsets;
  for (const onnx::OperatorSetIdProto& opset : state.model_.opset_import()) {
    opsets[opset.domain()] = static_cast<int>(opset.version());
  }
  const onnx_folding::ValueLookup value_of = [&state](const std::string& name) {
    const auto it = state.values_.find(name);
    return it == state.values_.end() ? nullptr : &it->second;
  };
  const onnx_folding::ShapeLookup shape_of = [&state](const std::string& name) {
    return state.KnownShape(name);
  };
  for (int32_t i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& node = g.node(i);
    if (state.roles_[i] == NodeRole::kFolded && node.output_size() == 1) {
      if (std::optional<onnx_folding::StaticValue> value =
              onnx_folding::EvaluateNode(node, state.opset_, value_of, shape_of)) {
        onnx::TypeProto_Tensor* type = state.types_[node.output(0)].mutable_tensor_type();
        type->Clear();
        type->set_elem_type(value->data_type);
        onnx::TensorShapeProto* shape = type->mutable_shape();
        for (const int64_t d : value->dims) shape->add_dim()->set_dim_value(d);
        state.values_.insert_or_assign(node.output(0), std::move(*value));
        continue;
      }
    }
    // Control flow reads outer-scope names its node does not list: not inferred (it is an
    // unsupported operator anyway, or costed 0 with an assumed shape below).
    if (!HasSubgraph(node)) {
      CheckWindowedOp(state, i);
      InferNode(state, i, opsets);
    }
    const bool zero_cost_unknown = state.roles_[i] == NodeRole::kActivation &&
                                   state.forward_id_[i] >= 0 &&
                                   !FindOpCostRule(node.op_type(), node.domain());
    if (zero_cost_unknown && node.output_size() > 0 && !state.KnownShape(node.output(0))) {
      AssumeOutputTypes(state, node);
    }
  }
}

}  // namespace remat::onnx_import
