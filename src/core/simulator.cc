// Memory and cost simulation of an operation list (docs/design.md §3, peak and cost definitions).
#include "core/simulator.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/cancellation.h"
#include "core/errors.h"

namespace remat {

SimulationResult Simulate(const Graph& graph, const Plan& plan) {
  const int32_t n = graph.size();
  SimulationResult result;
  result.evaluations_per_node.assign(n, 0);
  result.stage_peak_bytes.assign(n, 0);
  result.live_bytes_after_op.reserve(plan.size());
  std::vector<bool> allocated(n, false);
  std::vector<bool> computed(n, false);  // allocated and written since the allocation
  int64_t live_bytes = 0;
  int32_t stage = 0;

  auto fail = [&](size_t index, const Op& op, const std::string& what) {
    throw InternalError(fmt::format("plan operation {} ({} node {} '{}' in stage {}): {}", index,
                                    OpKindName(op.kind), op.node, graph.node(op.node).name,
                                    op.stage, what));
  };
  DeadlineCheck deadline;  // a strategy out of time abandons this schedule
  for (size_t k = 0; k < plan.size(); ++k) {
    deadline.Step();
    const Op& op = plan[k];
    if (op.node < 0 || op.node >= n || op.stage < 0 || op.stage >= n) {
      throw InternalError(fmt::format("plan operation {} names node {} in stage {}, outside the "
                                      "{}-node graph",
                                      k, op.node, op.stage, n));
    }
    if (op.stage < stage) fail(k, op, fmt::format("goes back from stage {}", stage));
    while (stage < op.stage) result.stage_peak_bytes[++stage] = live_bytes;
    const int64_t bytes = graph.node(op.node).bytes;
    int64_t during = 0;  // a compute's workspace, released when it ends
    switch (op.kind) {
      case OpKind::kAllocate:
        if (allocated[op.node]) fail(k, op, "the value is already allocated");
        allocated[op.node] = true;
        computed[op.node] = false;
        live_bytes += bytes;
        result.peak_bytes = std::max(result.peak_bytes, live_bytes);
        break;
      case OpKind::kCompute:
        if (!allocated[op.node]) fail(k, op, "its output buffer is not allocated");
        for (int32_t u : graph.preds(op.node)) {
          if (!computed[u]) fail(k, op, fmt::format("input node {} is not live", u));
        }
        computed[op.node] = true;
        during = graph.node(op.node).workspace_bytes;
        result.peak_bytes = std::max(result.peak_bytes, live_bytes + during);
        result.cost += graph.node(op.node).cost;
        ++result.evaluations;
        ++result.evaluations_per_node[op.node];
        break;
      case OpKind::kFree:
        if (!allocated[op.node]) fail(k, op, "the value is not allocated (double free)");
        allocated[op.node] = false;
        computed[op.node] = false;
        live_bytes -= bytes;
        break;
    }
    result.stage_peak_bytes[stage] = std::max(result.stage_peak_bytes[stage], live_bytes + during);
    result.live_bytes_after_op.push_back(live_bytes + during);
  }
  while (stage + 1 < n) result.stage_peak_bytes[++stage] = live_bytes;
  for (int32_t v = 0; v < n; ++v) {
    if (result.evaluations_per_node[v] == 0) {
      throw InternalError(fmt::format("node {} '{}' is never computed", v, graph.node(v).name));
    }
  }
  result.live_bytes_at_end = live_bytes;
  return result;
}

SimulationResult Simulate(const Graph& graph, const Schedule& schedule) {
  return Simulate(graph, BuildPlan(graph, schedule));
}

}  // namespace remat
