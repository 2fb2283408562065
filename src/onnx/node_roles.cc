// Classifying an import's ONNX nodes by where their inputs come from, and choosing the forward
// nodes the graph's output depends on.
#include "onnx/node_roles.h"

#include <fmt/format.h>

#include <algorithm>

#include "onnx/operator_costs.h"

namespace remat::onnx_import {
namespace {

using onnx::TensorProto;

// A Dropout is a copy, not an operation, in eval form: without training_mode (opset >= 12)
// or with a constant false one; opsets 7..11 define it for inference only; older opsets
// train unless is_test is set.
bool IsEvalDropout(const ImportState& state, const onnx::NodeProto& node) {
  if (state.opset_ < 7) {
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.name() == "is_test") return attr.i() != 0;
    }
    return false;
  }
  if (state.opset_ < 12) return true;
  if (node.input_size() < 3 || node.input(2).empty()) return true;
  const auto it = state.small_constants_.find(node.input(2));
  if (it == state.small_constants_.end()) return false;  // decided at run time: assume training
  const TensorProto& t = it->second;
  if (t.data_type() != TensorProto::BOOL) return false;
  if (!t.raw_data().empty()) return t.raw_data()[0] == 0;
  if (t.int32_data_size() > 0) return t.int32_data(0) == 0;
  return false;
}

}  // namespace

bool HasSubgraph(const onnx::NodeProto& node) {
  return std::any_of(node.attribute().begin(), node.attribute().end(),
                     [](const auto& attr) { return attr.has_g() || attr.graphs_size() > 0; });
}

void ClassifyNodes(ImportState& state) {
  const onnx::GraphProto& g = state.graph();
  for (const std::string& name : state.parameter_names_)
    state.tensors_[name] = {Origin::kStatic, -1};
  for (const std::string& name : state.data_inputs_) state.tensors_[name] = {Origin::kData, -1};
  state.roles_.assign(g.node_size(), NodeRole::kFolded);
  for (int32_t i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& node = g.node(i);
    bool reads_data = false;
    for (const std::string& input : node.input()) {
      if (input.empty()) continue;  // a missing optional input
      const auto it = state.tensors_.find(input);
      if (it == state.tensors_.end()) {
        state.Fail(fmt::format("node '{}' ({}) reads '{}', which nothing defines",
                               state.NodeName(i), state.OpType(node), input));
      }
      reads_data = reads_data || it->second.origin != Origin::kStatic;
    }
    const bool standard = IsStandardDomain(node.domain());
    const std::string& op = node.op_type();
    NodeRole role = NodeRole::kActivation;
    if (standard && (op == "Constant" || op == "Shape" || op == "Size")) {
      role = NodeRole::kFolded;  // values or sizes, never activations
    } else if (!reads_data && !HasSubgraph(node)) {
      role = NodeRole::kFolded;  // computed from constants and shapes only
    } else if (standard && node.input_size() > 0 && !node.input(0).empty() &&
               (op == "Identity" || (op == "Dropout" && IsEvalDropout(state, node)))) {
      role = NodeRole::kAlias;
    }
    state.roles_[i] = role;
    for (int k = 0; k < node.output_size(); ++k) {
      const std::string& output = node.output(k);
      if (output.empty()) continue;
      TensorInfo info{Origin::kStatic, -1};
      if (role == NodeRole::kActivation) info = {Origin::kActivation, i};
      if (role == NodeRole::kAlias && k == 0) info = state.tensors_.at(node.input(0));
      state.tensors_[output] = info;
    }
  }
}

void SelectForwardNodes(ImportState& state) {
  const onnx::GraphProto& g = state.graph();
  const std::string& output = g.output(0).name();
  const auto it = state.tensors_.find(output);
  if (it == state.tensors_.end())
    state.Fail(fmt::format("output '{}' is not produced by any node", output));
  if (it->second.origin != Origin::kActivation) {
    state.Fail(fmt::format("output '{}' is {}, not computed from the input data", output,
                           it->second.origin == Origin::kData ? "an input" : "a constant"));
  }
  std::vector<bool> kept(g.node_size(), false);
  std::vector<int32_t> stack = {it->second.producer};
  kept[it->second.producer] = true;
  while (!stack.empty()) {
    const int32_t i = stack.back();
    stack.pop_back();
    for (const std::string& input : g.node(i).input()) {
      if (input.empty()) continue;
      const TensorInfo& info = state.tensors_.at(input);
      if (info.origin == Origin::kActivation && !kept[info.producer]) {
        kept[info.producer] = true;
        stack.push_back(info.producer);
      }
    }
  }
  state.forward_id_.assign(g.node_size(), -1);
  for (int32_t i = 0; i < g.node_size(); ++i) {
    switch (state.roles_[i]) {
      case NodeRole::kFolded:
        ++state.result_.folded_nodes;
        break;
      case NodeRole::kAlias:
        ++state.result_.alias_nodes;
        break;
      case NodeRole::kActivation:
        if (kept[i]) {
          state.forward_id_[i] = static_cast<int32_t>(state.forward_nodes_.size());
          state.forward_nodes_.push_back(i);
        } else {
          ++state.result_.unused_nodes;
        }
        break;
    }
  }
  state.result_.onnx_nodes = g.node_size();
}

void CheckOperators(ImportState& state) {
  for (const int32_t i : state.forward_nodes_) {
    const onnx::NodeProto& node = state.graph().node(i);
    if (FindOpCostRule(node.op_type(), node.domain())) continue;
    if (state.options_.unknown_ops == UnknownOps::kError) {
      state.Fail(
          fmt::format("unsupported ONNX operator '{}' (node '{}'); docs/onnx.md lists the "
                      "supported ones, and --unknown-ops=zero-cost costs unknown ones 0",
                      state.OpType(node), state.NodeName(i)));
    }
    state.result_.zero_cost_nodes.push_back(
        fmt::format("{} ({})", state.OpType(node), state.NodeName(i)));
  }
}

}  // namespace remat::onnx_import
