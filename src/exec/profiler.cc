// Per-node timing: one full evaluation to populate every value, then each node timed alone.
#include "exec/profiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "exec/counting_allocator.h"
#include "exec/executor.h"

#include <ATen/Parallel.h>

namespace remat::exec {

CostProfile ProfileGraph(Network& network, const Graph& graph, const ProfileOptions& options) {
  at::set_num_threads(options.threads);
  Executor executor(network, graph);
  executor.BeginStep(1);
  for (int32_t v = 0; v < graph.size(); ++v) executor.SetValue(v, executor.ComputeNode(v, true));

  CostProfile profile{.structure_fingerprint = StructureFingerprint(graph),
                      .model = network.info().model,
                      .settings = fmt::format("batch {}, input {}, threads {}, warmup {}, "
                                              "median of {}",
                                              network.info().batch,
                                              FormatShape(network.info().input_shape),
                                              options.threads, options.warmup, options.repeats)};
  CountingAllocator& counter = CountingAllocator::Install();
  for (int32_t v = 0; v < graph.size(); ++v) {
    for (int32_t k = 0; k < options.warmup; ++k) executor.ComputeNode(v, true);
    std::vector<double> times_ms;
    int64_t workspace = 0;
    for (int32_t k = 0; k < std::max(options.repeats, 1); ++k) {
      const int64_t live_before = counter.live_bytes();
      counter.ResetPeak();
      const auto start = std::chrono::steady_clock::now();
      at::Tensor value = executor.ComputeNode(v, true);
      // Allocated and released inside the node, above its output (Node::workspace_bytes).
      workspace = std::max(workspace, counter.peak_bytes() - live_before -
                                          static_cast<int64_t>(value.nbytes()));
      value = at::Tensor();  // the free is part of the node's cost
      times_ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
    std::nth_element(times_ms.begin(), times_ms.begin() + times_ms.size() / 2, times_ms.end());
    profile.nodes.push_back({.id = v,
                             .name = graph.node(v).name,
                             .cost_ms = times_ms[times_ms.size() / 2],
                             .workspace_bytes = workspace});
  }
  executor.ClearValues();
  network.ZeroGradients();
  return profile;
}

}  // namespace remat::exec
