// The executor: plan operations to kernel calls, with reads checked against the graph.
#include "exec/executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/errors.h"
#include "core/simulator.h"
#include "exec/counting_allocator.h"

namespace remat::exec {

bool GradientsAgree(const GradientComparison& comparison) {
  return comparison.bitwise_equal ||
         comparison.max_abs_diff <= 1e-6 * std::max(1.0, comparison.max_abs_gradient);
}

uint64_t DropoutSeed(uint64_t step_seed, int32_t id) {
  return ((step_seed * 1000003ULL) ^ (static_cast<uint64_t>(id) * 0x9E3779B97F4A7C15ULL)) | 1ULL;
}

Executor::Executor(Network& network, const Graph& graph)
    : network_(network), graph_(graph), values_(graph.size()), states_(network.size()) {
  const int32_t f = network.size();
  if (!graph.has_training_structure() || graph.size() != 2 * f + 1 || *graph.loss() != f) {
    throw InternalError(fmt::format("graph '{}' is not the training graph of {} ({} layers)",
                                    graph.name(), network.info().model, f));
  }
}

void Executor::ClearValues() {
  for (at::Tensor& v : values_) v = at::Tensor();
}

const at::Tensor& Executor::Read(int32_t reader, int32_t node) const {
  const auto& preds = graph_.preds(reader);
  if (!std::binary_search(preds.begin(), preds.end(), node)) {
    throw InternalError(fmt::format("node {} ({}) reads node {} ({}), which is not an in-edge",
                                    reader, graph_.node(reader).name, node,
                                    graph_.node(node).name));
  }
  if (!values_[node].defined()) {
    throw InternalError(fmt::format("node {} ({}) reads node {} ({}), which is not live", reader,
                                    graph_.node(reader).name, node, graph_.node(node).name));
  }
  return values_[node];
}

at::Tensor Executor::ComputeNode(int32_t node, bool first) {
  const int32_t f = forward_count();
  if (node < f) {
    const ExecLayer& layer = network_.layer(node);
    std::vector<at::Tensor> inputs;
    for (int32_t input : layer.inputs) {
      inputs.push_back(input < 0 ? network_.input() : Read(node, input));
    }
    return ForwardLayer(layer, network_.tensors(node), inputs, states_[node],
                        first && !states_[node].computed);
  }
  if (node == f) return LossForward(network_.loss_input(), Read(node, f - 1), network_.labels());

  // bwd(j): the gradient of j's output from j's consumers (docs/design.md §1).
  const int32_t j = 2 * f - node;
  at::Tensor grad;
  auto add = [&grad](at::Tensor contribution) {
    if (!grad.defined()) {
      grad = std::move(contribution);
    } else {
      grad.add_(contribution);
    }
  };
  const at::Tensor& own = Read(node, j);
  if (j == f - 1) {
    Read(node, f);  // the loss value: an in-edge, although its gradient is the constant 1
    add(LossBackward(network_.loss_input(), own, network_.labels()));
  }
  for (int32_t consumer : graph_.succs(j)) {
    if (consumer >= f) continue;
    const ExecLayer& layer = network_.layer(consumer);
    // The consumer's inputs as its backward reads them: j itself, and the other factors of a
    // product (in-edges by the training graph's product rule); nothing else.
    std::vector<at::Tensor> inputs(layer.inputs.size());
    for (size_t k = 0; k < layer.inputs.size(); ++k) {
      const int32_t input = layer.inputs[k];
      if (input == j) {
        inputs[k] = own;
      } else if (layer.backward_reads_inputs) {
        inputs[k] = input < 0 ? network_.input() : Read(node, input);
      }
    }
    for (int32_t position = 0; position < static_cast<int32_t>(layer.inputs.size()); ++position) {
      if (layer.inputs[position] != j) continue;
      // A consumer's parameter gradients are computed once: by the backward node of its
      // first input, on that node's first evaluation of the step (a tied head's go to the
      // embedding whose table it reads).
      std::vector<at::Tensor>* params =
          first && position == 0 ? &network_.gradients(network_.parameter_owner(consumer))
                                 : nullptr;
      add(InputGradient(layer, network_.tensors(consumer), position, inputs,
                        Read(node, consumer), Read(node, 2 * f - consumer), states_[consumer],
                        params));
    }
  }
  const ExecLayer& layer = network_.layer(j);
  if (first && !layer.inputs.empty() && layer.inputs[0] < 0) {
    ParameterGradientsFromNetworkInput(layer, network_.tensors(j), network_.input(), own, grad,
                                       states_[j], network_.gradients(j));
  }
  if (!grad.defined()) {
    throw InternalError(fmt::format("node {} ({}): no consumer gives a gradient", node,
                                    graph_.node(node).name));
  }
  return grad;
}

void Executor::BeginStep(uint64_t dropout_seed) {
  network_.ZeroGradients();
  ClearValues();
  for (int32_t id = 0; id < forward_count(); ++id) {
    states_[id] = ForwardState{.dropout_seed = DropoutSeed(dropout_seed, id)};
  }
}

StepResult Executor::Run(const Plan& plan, uint64_t dropout_seed) {
  const SimulationResult simulated = Simulate(graph_, plan);
  CountingAllocator& counter = CountingAllocator::Install();
  BeginStep(dropout_seed);
  std::vector<int32_t> evaluations(graph_.size(), 0);
  StepResult result{
      .predicted_peak_bytes = simulated.peak_bytes,
      .predicted_tensor_peak_bytes = Simulate(WithoutWorkspace(graph_), plan).peak_bytes};
  int64_t held_bytes = 0;

  const auto start = std::chrono::steady_clock::now();
  result.fixed_bytes = counter.live_bytes();
  int64_t measured_peak = result.fixed_bytes;  // the allocator peaks only inside computes
  for (const Op& op : plan) {
    const int32_t v = op.node;
    switch (op.kind) {
      case OpKind::kAllocate:
        // ATen allocates inside the kernel; the bytes are counted at the compute.
        break;
      case OpKind::kCompute: {
        const int64_t live_before = counter.live_bytes();
        counter.ResetPeak();
        at::Tensor value = ComputeNode(v, evaluations[v] == 0);
        const auto bytes = static_cast<int64_t>(value.nbytes());
        measured_peak = std::max(measured_peak, counter.peak_bytes());
        const int64_t transient = counter.peak_bytes() - live_before - bytes;
        if (transient > result.largest_transient_bytes) {
          result.largest_transient_bytes = transient;
          result.largest_transient_node = v;
        }
        if (bytes != graph_.node(v).bytes) {
          throw InternalError(fmt::format("node {} ({}) produced {} bytes, the graph says {}", v,
                                          graph_.node(v).name, bytes, graph_.node(v).bytes));
        }
        const int64_t previous = values_[v].defined() ? bytes : 0;
        result.tensor_peak_bytes = std::max(result.tensor_peak_bytes, held_bytes - previous + bytes);
        held_bytes += bytes - previous;
        values_[v] = std::move(value);
        if (v == forward_count() && evaluations[v] == 0) {
          result.loss = values_[v].mean().item<double>();
        }
        ++evaluations[v];
        ++result.evaluations;
        if (evaluations[v] > 1) ++result.recomputations;
        break;
      }
      case OpKind::kFree:
        if (!values_[v].defined()) {
          throw InternalError(fmt::format("plan frees node {} ({}), which is not live", v,
                                          graph_.node(v).name));
        }
        held_bytes -= static_cast<int64_t>(values_[v].nbytes());
        values_[v] = at::Tensor();
        break;
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.measured_peak_bytes = measured_peak - result.fixed_bytes;
  ClearValues();
  return result;
}

ReferenceStep AutogradStep(const Network& network, uint64_t dropout_seed) {
  const int32_t f = network.size();
  std::vector<LayerTensors> params(f);
  std::vector<std::vector<at::Tensor>> leaves(f);
  for (int32_t id = 0; id < f; ++id) {
    const LayerTensors& t = network.tensors(id);
    if (network.parameter_owner(id) != id) {
      // A tied head reads its embedding's leaf, so autograd sums both uses' gradients.
      params[id].weight = params[network.parameter_owner(id)].weight;
      continue;
    }
    auto leaf = [&](const at::Tensor& p) {
      if (!p.defined()) return at::Tensor();
      at::Tensor copy = p.detach().clone().set_requires_grad(true);
      leaves[id].push_back(copy);
      return copy;
    };
    params[id].weight = leaf(t.weight);
    params[id].bias = leaf(t.bias);
    params[id].position = leaf(t.position);
    if (t.running_mean.defined()) {
      params[id].running_mean = t.running_mean.clone();
      params[id].running_var = t.running_var.clone();
    }
  }
  std::vector<at::Tensor> outputs(f);
  for (int32_t id = 0; id < f; ++id) {
    const ExecLayer& layer = network.layer(id);
    std::vector<at::Tensor> inputs;
    for (int32_t input : layer.inputs) {
      inputs.push_back(input < 0 ? network.input() : outputs[input]);
    }
    ForwardState state{.dropout_seed = DropoutSeed(dropout_seed, id)};
    outputs[id] = ForwardLayer(layer, params[id], inputs, state, true);
  }
  const at::Tensor loss =
      LossForward(network.loss_input(), outputs[f - 1], network.labels()).mean();
  loss.backward();
  ReferenceStep result{.loss = loss.item<double>()};
  for (int32_t id = 0; id < f; ++id) {
    result.gradients.emplace_back();
    for (const at::Tensor& leaf : leaves[id]) result.gradients.back().push_back(leaf.grad());
  }
  return result;
}

std::vector<std::vector<at::Tensor>> CopyGradients(const Network& network) {
  std::vector<std::vector<at::Tensor>> result;
  for (int32_t id = 0; id < network.size(); ++id) {
    result.emplace_back();
    for (const at::Tensor& g : network.gradients(id)) result.back().push_back(g.clone());
  }
  return result;
}

GradientComparison CompareGradients(const std::vector<std::vector<at::Tensor>>& a,
                                    const std::vector<std::vector<at::Tensor>>& b) {
  if (a.size() != b.size()) throw InternalError("gradient lists of different lengths");
  GradientComparison result;
  for (size_t id = 0; id < a.size(); ++id) {
    if (a[id].size() != b[id].size()) throw InternalError("gradient lists of different shapes");
    for (size_t k = 0; k < a[id].size(); ++k) {
      if (!b[id][k].defined()) throw InternalError("a reference gradient is missing");
      result.max_abs_diff =
          std::max(result.max_abs_diff, (a[id][k] - b[id][k]).abs().max().item<double>());
      result.max_abs_gradient =
          std::max(result.max_abs_gradient, b[id][k].abs().max().item<double>());
      if (!at::equal(a[id][k], b[id][k])) result.bitwise_equal = false;
    }
  }
  return result;
}

}  // namespace remat::exec
