// R from S (docs/design.md §3): each stage computes its frontier node and every value that S starts
// holding in the next stage, then, recursively, every input of a computed node that the
// stage neither computes nor holds. Linear in the size of R (times log runs) for any S.
#include "core/recompute.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace remat {

Schedule ScheduleFromCheckpoints(const Graph& graph, StageMatrix S) {
  const int32_t n = graph.size();
  if (S.rows() != n || S.cols() != n) {
    throw InternalError(fmt::format("S is {}x{} for a graph of {} nodes", S.rows(), S.cols(), n));
  }
  // seeds[t]: the frontier node and the values whose holding starts in stage t + 1.
  std::vector<std::vector<int32_t>> seeds(n);
  for (int32_t i = 0; i < n; ++i) {
    seeds[i].push_back(i);
    for (const StageRun& run : S.Runs(i)) {
      if (run.first <= i) {
        throw InternalError(
            fmt::format("S[{}][{}] = 1 holds a value ahead of the frontier", run.first, i));
      }
      seeds[run.first - 1].push_back(i);
    }
  }
  StageMatrix R(n, n);
  std::vector<int32_t> added_in(n, -1);  // the last stage that added the node to R
  std::vector<int32_t> pending;
  for (int32_t t = 0; t < n; ++t) {
    for (int32_t v : seeds[t]) {
      if (added_in[v] == t) continue;
      added_in[v] = t;
      pending.push_back(v);
    }
    while (!pending.empty()) {
      const int32_t v = pending.back();
      pending.pop_back();
      R.Set(t, v);
      for (int32_t u : graph.preds(v)) {
        if (added_in[u] == t || S.Get(t, u)) continue;
        added_in[u] = t;
        pending.push_back(u);
      }
    }
  }
  return {std::move(R), std::move(S)};
}

}  // namespace remat
