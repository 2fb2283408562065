// Conversion of an import's forward nodes into a forward graph: bytes from inferred shapes,
// costs by the cost model, edges from the activations each node reads, backward costs and
// workspace from what each node's consumers read.
#include "onnx/forward_conversion.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <utility>

#include "onnx/operator_costs.h"

namespace remat::onnx_import {
namespace {

// Operators whose vector-Jacobian product with respect to one input reads the other inputs:
// products and quotients. Elementwise sums and data movement do not.
bool IsProductOfInputs(const onnx::NodeProto& node) {
  const std::string& op = node.op_type();
  return IsStandardDomain(node.domain()) &&
         (op == "MatMul" || op == "Gemm" || op == "Mul" || op == "Div" || op == "Einsum");
}

// What a forward node's backward reads and computes (docs/onnx.md, "Backward costs").
struct BackwardInputs {
  std::optional<OpCostRule> rule;  // none: an unknown operator costed 0
  double flops = 0;
  int64_t output_bytes = 0;
  int64_t weight_bytes = 0;                              // static operands read
  std::vector<std::pair<int32_t, int64_t>> activations;  // (forward id, bytes) per input
};

// docs/design.md §1: bwd(j) runs the input gradient of every consumer of j for each input that reads
// j, and the weight gradients of the consumers whose first activation input is j (of a node
// without activation inputs, its own backward node: nothing differentiates the data); the
// last node's backward also runs the loss gradient.
void AttributeBackwardCosts(ImportState& state, const std::vector<BackwardInputs>& nodes) {
  ForwardGraph& forward = state.result_.forward;
  const DeviceSpec* device = state.options_.device ? &*state.options_.device : nullptr;
  std::vector<double> cost(nodes.size(), 0.0);
  // Workspace (docs/onnx.md): a gradient contribution after the first is a temporary of the
  // value's size; a weight gradient is a fresh tensor of the weights' size.
  std::vector<int32_t> contributions(nodes.size(), 0);
  std::vector<int64_t> weight_gradient(nodes.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const BackwardInputs& node = nodes[i];
    if (!node.rule) continue;
    for (size_t k = 0; k < node.activations.size(); ++k) {
      const auto [source, bytes] = node.activations[k];
      int64_t other = node.weight_bytes;
      if (*node.rule == OpCostRule::kMatMul && node.activations.size() == 2) {
        other = node.activations[1 - k].second;  // a product of two activations
      }
      cost[source] += KernelCost(
          state.options_.cost_model,
          OpInputGradientWork(*node.rule, node.flops, node.output_bytes, bytes, other), device);
      ++contributions[source];
    }
    const int64_t input = node.activations.empty() ? 0 : node.activations[0].second;
    if (const std::optional<KernelWork> weights = OpWeightGradientWork(
            *node.rule, node.flops, node.output_bytes, input, node.weight_bytes)) {
      const size_t owner = node.activations.empty() ? i : node.activations[0].first;
      cost[owner] += KernelCost(state.options_.cost_model, *weights, device);
      weight_gradient[owner] = std::max(weight_gradient[owner], node.weight_bytes);
    }
  }
  if (state.options_.workspace != WorkspaceModel::kNone) {
    for (size_t j = 0; j < nodes.size(); ++j) {
      forward.nodes[j].backward_workspace_bytes =
          (contributions[j] > 1 ? forward.nodes[j].bytes : 0) + weight_gradient[j];
    }
  }
  if (!nodes.empty()) {
    cost.back() +=
        KernelCost(state.options_.cost_model, LossGradientWork(nodes.back().output_bytes), device);
  }
  for (size_t i = 0; i < nodes.size(); ++i) forward.nodes[i].backward_cost = cost[i];
}

// Which activations later forward nodes (or the output) read: a node's bytes are those of
// its outputs that are read, and always its first (Dropout masks and batch-norm running
// statistics nobody reads cost no memory).
std::set<std::string> ReadTensors(const ImportState& state) {
  const onnx::GraphProto& g = state.graph();
  std::set<std::string> read;
  read.insert(g.output(0).name());
  for (const int32_t i : state.forward_nodes_) {
    for (const std::string& input : g.node(i).input()) {
      if (!input.empty()) read.insert(input);
    }
  }
  return read;
}

// The analytic forward FLOPs of ONNX node `i` at the requested batch, from its inputs' shapes
// (in `shapes`) and its first output's; 0 for an unknown operator costed 0.
double NodeFlops(const ImportState& state, int32_t i, const std::optional<OpCostRule>& rule,
                 OpShapes shapes) {
  const onnx::NodeProto& node = state.graph().node(i);
  double flops = 0;
  if (rule) {
    const std::optional<Shape> output = node.output_size() > 0 && !node.output(0).empty()
                                            ? state.KnownShape(node.output(0))
                                            : std::nullopt;
    if (!output) {
      state.Fail(
          fmt::format("node '{}' ({}) has no first output", state.NodeName(i), state.OpType(node)));
    }
    shapes.output = *output;
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.name() == "transA") shapes.trans_a = attr.i() != 0;
    }
    const std::optional<double> f = OpForwardFlops(*rule, shapes);
    if (!f) {
      state.Fail(
          fmt::format("cannot count the FLOPs of node '{}' ({}): an input's shape is "
                      "unknown or of an unexpected rank",
                      state.NodeName(i), state.OpType(node)));
    }
    flops = state.ScaleFlops(*f);
  }
  return flops;
}

// The forward edges into ONNX node `i`, one per activation it reads, and whether its backward
// reads its inputs.
void AddForwardEdges(ImportState& state, int32_t i) {
  const onnx::NodeProto& node = state.graph().node(i);
  ForwardGraph& forward = state.result_.forward;
  std::vector<int32_t> sources;
  for (const std::string& input : node.input()) {
    if (input.empty()) continue;
    const TensorInfo& info = state.tensors_.at(input);
    if (info.origin == Origin::kActivation) sources.push_back(state.forward_id_[info.producer]);
  }
  std::sort(sources.begin(), sources.end());
  sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
  for (const int32_t src : sources) forward.edges.push_back({src, state.forward_id_[i]});
  // A product of two activations: the gradient of each factor reads the other
  // (BuildTrainingGraph's extra edges, docs/semantics.md).
  forward.nodes.back().backward_reads_inputs = sources.size() >= 2 && IsProductOfInputs(node);
}

// Appends ONNX node `i` as a forward node (bytes of its read outputs, cost by the cost model),
// its type and FLOPs to the result, and what its backward reads to `backward_inputs`.
void AddForwardNode(ImportState& state, int32_t i, const std::set<std::string>& read,
                    std::vector<BackwardInputs>& backward_inputs) {
  const onnx::GraphProto& g = state.graph();
  ForwardGraph& forward = state.result_.forward;
  const onnx::NodeProto& node = g.node(i);
  int64_t output_bytes = 0;
  for (int k = 0; k < node.output_size(); ++k) {
    const std::string& output = node.output(k);
    if (output.empty() || (k > 0 && read.count(output) == 0)) continue;
    output_bytes += state.TensorBytes(output, i);
  }
  int64_t static_input_bytes = 0;  // weights read, for the roofline
  int64_t input_bytes = 0;         // activations and data read
  OpShapes shapes;
  for (const std::string& input : node.input()) {
    shapes.inputs.push_back(input.empty() ? std::nullopt : state.KnownShape(input));
    if (input.empty() || !shapes.inputs.back()) continue;
    const int64_t bytes = state.TensorBytes(input, i);
    (state.tensors_.at(input).origin == Origin::kStatic ? static_input_bytes : input_bytes) +=
        bytes;
  }
  const std::optional<OpCostRule> rule = FindOpCostRule(node.op_type(), node.domain());
  const double flops = NodeFlops(state, i, rule, std::move(shapes));
  const int64_t bytes = state.ScaleBytes(output_bytes);
  const KernelWork work{.flops = flops,
                        .bytes_moved = bytes + state.ScaleBytes(input_bytes) + static_input_bytes};
  // An unknown operator (--unknown-ops=zero-cost) costs 0, traffic included.
  const double cost = rule ? KernelCost(state.options_.cost_model, work,
                                        state.options_.device ? &*state.options_.device : nullptr)
                           : 0.0;
  forward.nodes.push_back({.name = state.NodeName(i), .cost = cost, .bytes = bytes});
  BackwardInputs& b = backward_inputs.emplace_back();
  b.rule = rule;
  b.flops = flops;
  b.output_bytes =
      node.output_size() > 0 && !node.output(0).empty() && state.KnownShape(node.output(0))
          ? state.ScaleBytes(state.TensorBytes(node.output(0), i))
          : bytes;
  b.weight_bytes = static_input_bytes;
  for (const std::string& input : node.input()) {
    if (input.empty()) continue;
    const TensorInfo& info = state.tensors_.at(input);
    if (info.origin == Origin::kActivation) {
      b.activations.emplace_back(state.forward_id_[info.producer],
                                 state.ScaleBytes(state.TensorBytes(input, i)));
    }
  }
  state.result_.op_types.push_back(state.OpType(node));
  state.result_.flops.push_back(flops);
  AddForwardEdges(state, i);
}

// The input batch: the data inputs' bytes at the requested batch.
void CountDataInputs(ImportState& state) {
  for (const std::string& name : state.data_inputs_) {
    const auto it = state.types_.find(name);
    const std::optional<Shape> shape = state.KnownShape(name);
    const std::optional<int64_t> element_bytes =
        it == state.types_.end() ? std::nullopt
                                 : ElementBytes(it->second.tensor_type().elem_type());
    const std::optional<int64_t> elements = shape ? CheckedElements(*shape) : std::nullopt;
    const std::optional<int64_t> bytes =
        elements && element_bytes ? CheckedMul(*elements, *element_bytes) : std::nullopt;
    if (!bytes) state.Fail(fmt::format("input '{}' has no size", name));
    state.result_.input_bytes += state.ScaleBytes(*bytes);  // data inputs all carry the batch
  }
}

}  // namespace

ImportedOnnxModel ConvertToForwardGraph(ImportState& state) {
  const std::set<std::string> read = ReadTensors(state);
  std::vector<BackwardInputs> backward_inputs;
  ForwardGraph& forward = state.result_.forward;
  forward.name =
      fmt::format("{} (onnx, batch {})", std::filesystem::path(state.source_).stem().string(),
                  state.result_.batch);
  forward.cost_unit = CostUnit(state.options_.cost_model);
  for (const int32_t i : state.forward_nodes_) AddForwardNode(state, i, read, backward_inputs);
  forward.loss_bytes = 4 * state.result_.batch;  // one float per sample (docs/design.md §1)
  forward.loss_cost = 0.0;
  AttributeBackwardCosts(state, backward_inputs);
  CountDataInputs(state);
  state.result_.ir_version = state.model_.ir_version();
  state.result_.opset = state.opset_;
  state.result_.producer =
      state.model_.producer_name().empty()
          ? std::string()
          : state.model_.producer_name() + " " + state.model_.producer_version();
  return std::move(state.result_);
}

}  // namespace remat::onnx_import
