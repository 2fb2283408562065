// Lowering of a staged schedule to an operation list (docs/design.md §3).
#include "core/plan.h"

#include "core/cancellation.h"

namespace remat {

const char* OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kAllocate: return "allocate";
    case OpKind::kCompute: return "compute";
    case OpKind::kFree: return "free";
  }
  return "?";
}

Plan BuildPlan(const Graph& graph, const Schedule& schedule) {
  const int32_t n = graph.size();
  const StageMatrix& R = schedule.R;
  const StageMatrix& S = schedule.S;
  Plan plan;
  plan.reserve(static_cast<size_t>(R.CountOnes()) * 3);
  const std::vector<std::vector<int32_t>> rows = R.Rows();
  // hold_ends[t]: the values whose holding ends in stage t (held into t, not into t + 1), in
  // increasing order. Only these can be freed at a stage's start, so no stage looks at the
  // values that stay held through it: the plan takes time linear in the schedule's runs.
  std::vector<std::vector<int32_t>> hold_ends(n);
  for (int32_t u = 0; u < n; ++u) {
    for (const StageRun& run : S.Runs(u)) hold_ends[run.last].push_back(u);
  }
  std::vector<bool> live(n, false);
  std::vector<int32_t> last_use(n, -1);
  DeadlineCheck deadline;  // a strategy out of time abandons this schedule

  for (int32_t t = 0; t < n; ++t) {
    deadline.Step(1 + static_cast<int64_t>(rows[t].size()));
    const std::vector<int32_t>& computed = rows[t];
    // last_use[u]: the last position in this stage whose node reads u.
    for (int32_t v : computed) {
      for (int32_t u : graph.preds(v)) last_use[u] = v;  // v increases, so the last write wins
    }
    auto needed_after = [&](int32_t u, int32_t position) {
      return (t + 1 < n && S.Get(t + 1, u)) || last_use[u] > position;
    };
    auto free_if_done = [&](int32_t u, int32_t position) {
      if (live[u] && !needed_after(u, position)) {
        plan.push_back({OpKind::kFree, t, u});
        live[u] = false;
      }
    };
    // Stage start: drop every live value that nothing after its own position needs. A value
    // live here is held into t (every other one was freed in stage t - 1), so only those whose
    // holding ends in t can go.
    for (int32_t u : hold_ends[t]) free_if_done(u, u);
    // Positions in increasing order; positions whose node does not run free nothing, because
    // a value is always freed at its own position or at the position of its last reader.
    for (int32_t i : computed) {
      if (!live[i]) {
        plan.push_back({OpKind::kAllocate, t, i});
        live[i] = true;
      }
      plan.push_back({OpKind::kCompute, t, i});
      for (int32_t u : graph.preds(i)) free_if_done(u, i);
      free_if_done(i, i);
    }
    for (int32_t v : computed) {
      for (int32_t u : graph.preds(v)) last_use[u] = -1;
    }
  }
  return plan;
}

}  // namespace remat
