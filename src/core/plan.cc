// Lowering of a staged schedule to an operation list (DESIGN §3).
#include "core/plan.h"

#include <algorithm>

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
  const BitMatrix& R = schedule.R;
  const BitMatrix& S = schedule.S;
  Plan plan;
  plan.reserve(static_cast<size_t>(R.CountOnes()) * 3);
  std::vector<bool> live(n, false);
  std::vector<int32_t> live_ids;  // live values, possibly with stale entries
  std::vector<int32_t> last_use(n, -1);

  for (int32_t t = 0; t < n; ++t) {
    const std::vector<int32_t> computed = R.RowOnes(t);
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
    // Stage start: drop every live value that nothing after its own position needs.
    std::vector<int32_t> carried;
    for (int32_t u : live_ids) {
      if (live[u]) carried.push_back(u);
    }
    std::sort(carried.begin(), carried.end());
    carried.erase(std::unique(carried.begin(), carried.end()), carried.end());
    for (int32_t u : carried) free_if_done(u, u);
    live_ids.clear();
    for (int32_t u : carried) {
      if (live[u]) live_ids.push_back(u);
    }
    // Positions in increasing order; positions whose node does not run free nothing, because
    // a value is always freed at its own position or at the position of its last reader.
    for (int32_t i : computed) {
      if (!live[i]) {
        plan.push_back({OpKind::kAllocate, t, i});
        live[i] = true;
        live_ids.push_back(i);
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
