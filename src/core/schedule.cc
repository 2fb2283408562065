// Validity checks for a staged schedule (DESIGN §3: frontier-advancing and correctness).
#include "core/schedule.h"

#include <fmt/format.h>

namespace remat {

Schedule EmptySchedule(const Graph& graph) {
  return {BitMatrix(graph.size(), graph.size()), BitMatrix(graph.size(), graph.size())};
}

std::vector<std::string> CheckSchedule(const Graph& graph, const Schedule& schedule,
                                       size_t max_messages) {
  std::vector<std::string> problems;
  auto report = [&](std::string message) {
    if (problems.size() < max_messages) problems.push_back(std::move(message));
  };
  const int32_t n = graph.size();
  const BitMatrix& R = schedule.R;
  const BitMatrix& S = schedule.S;
  if (R.rows() != n || R.cols() != n || S.rows() != n || S.cols() != n) {
    report(fmt::format("schedule is {}x{} (R) and {}x{} (S) but the graph has {} nodes", R.rows(),
                       R.cols(), S.rows(), S.cols(), n));
    return problems;
  }
  auto name = [&](int32_t i) { return fmt::format("node {} ('{}')", i, graph.node(i).name); };
  for (int32_t t = 0; t < n; ++t) {
    // Frontier-advancing: stage t computes node t and nothing later; holds nothing >= t.
    if (!R.Get(t, t)) report(fmt::format("stage {}: {} is not computed (frontier)", t, name(t)));
    for (int32_t i : R.RowOnes(t)) {
      if (i > t) report(fmt::format("stage {}: {} is computed ahead of the frontier", t, name(i)));
    }
    for (int32_t i : S.RowOnes(t)) {
      if (i >= t) report(fmt::format("stage {}: {} is held before it exists", t, name(i)));
    }
    // Correctness: a checkpoint exists before or is computed in the previous stage.
    if (t + 1 < n) {
      for (int32_t i : S.RowOnes(t + 1)) {
        if (!S.Get(t, i) && !R.Get(t, i)) {
          report(fmt::format("stage {}: {} is held but was neither held nor computed in stage {}",
                             t + 1, name(i), t));
        }
      }
    }
    // Correctness: every input of a computed node is computed or held in the same stage.
    for (int32_t v : R.RowOnes(t)) {
      for (int32_t u : graph.preds(v)) {
        if (!R.Get(t, u) && !S.Get(t, u)) {
          report(fmt::format("stage {}: {} reads {}, which is neither computed nor held", t,
                             name(v), name(u)));
        }
      }
    }
  }
  return problems;
}

}  // namespace remat
