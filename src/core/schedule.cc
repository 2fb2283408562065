// Validity checks for a staged schedule (docs/design.md §3: frontier-advancing and correctness), run
// over the runs of R and S so that they take time linear in the schedule's size.
#include "core/schedule.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/cancellation.h"

namespace remat {
namespace {

// The first stage of first..last in which neither `a` nor `b` has `col` set, or -1.
int32_t FirstUncovered(const StageMatrix& a, const StageMatrix& b, int32_t col, int32_t first,
                       int32_t last) {
  for (int32_t t = first; t <= last;) {
    // A run of `a` or `b` containing t moves t past its end.
    const std::optional<StageRun> in_a = a.RunAt(t, col), in_b = b.RunAt(t, col);
    if (!in_a && !in_b) return t;
    t = std::max(in_a ? in_a->last : t, in_b ? in_b->last : t) + 1;
  }
  return -1;
}

}  // namespace

Schedule EmptySchedule(const Graph& graph) {
  return {StageMatrix(graph.size(), graph.size()), StageMatrix(graph.size(), graph.size())};
}

std::vector<std::string> CheckSchedule(const Graph& graph, const Schedule& schedule,
                                       size_t max_messages) {
  const int32_t n = graph.size();
  const StageMatrix& R = schedule.R;
  const StageMatrix& S = schedule.S;
  if (R.rows() != n || R.cols() != n || S.rows() != n || S.cols() != n) {
    return {fmt::format("schedule is {}x{} (R) and {}x{} (S) but the graph has {} nodes",
                        R.rows(), R.cols(), S.rows(), S.cols(), n)};
  }
  // Problems are found node by node and reported in stage order.
  std::vector<std::pair<int32_t, std::string>> found;
  auto name = [&](int32_t i) { return fmt::format("node {} ('{}')", i, graph.node(i).name); };
  DeadlineCheck deadline;  // a strategy out of time abandons this schedule
  for (int32_t i = 0; i < n; ++i) {
    deadline.Step(1 + static_cast<int64_t>(R.Runs(i).size() + S.Runs(i).size()));
    // Frontier-advancing: stage i computes node i, no stage before i computes it, and it is
    // held only after stage i.
    if (!R.Get(i, i)) {
      found.emplace_back(i, fmt::format("stage {}: {} is not computed (frontier)", i, name(i)));
    }
    if (!R.Runs(i).empty() && R.Runs(i).front().first < i) {
      const int32_t t = R.Runs(i).front().first;
      found.emplace_back(t, fmt::format("stage {}: {} is computed ahead of the frontier", t, name(i)));
    }
    for (const StageRun& run : S.Runs(i)) {
      if (run.first <= i) {
        found.emplace_back(run.first, fmt::format("stage {}: {} is held before it exists",
                                                  run.first, name(i)));
      } else if (!R.Get(run.first - 1, i)) {
        // Correctness: a hold starts right after a stage that computes the value (the stage
        // before a run does not hold it: runs are maximal).
        found.emplace_back(run.first - 1,
                           fmt::format("stage {}: {} is held but was neither held nor computed "
                                       "in stage {}",
                                       run.first, name(i), run.first - 1));
      }
    }
    // Correctness: every input of a computed node is computed or held in the same stage.
    for (const StageRun& run : R.Runs(i)) {
      for (int32_t u : graph.preds(i)) {
        const int32_t t = FirstUncovered(R, S, u, run.first, run.last);
        if (t >= 0) {
          found.emplace_back(t, fmt::format("stage {}: {} reads {}, which is neither computed "
                                            "nor held",
                                            t, name(i), name(u)));
        }
      }
    }
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> problems;
  for (size_t k = 0; k < found.size() && k < max_messages; ++k) {
    problems.push_back(std::move(found[k].second));
  }
  return problems;
}

}  // namespace remat
