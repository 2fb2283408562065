// R from S (DESIGN §3): start from the identity, add values that a checkpoint needs next
// stage, then walk each stage downward adding missing inputs of computed nodes.
#include "core/recompute.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace remat {

Schedule ScheduleFromCheckpoints(const Graph& graph, BitMatrix S) {
  const int32_t n = graph.size();
  if (S.rows() != n || S.cols() != n) {
    throw InternalError(fmt::format("S is {}x{} for a graph of {} nodes", S.rows(), S.cols(), n));
  }
  BitMatrix R(n, n);
  for (int32_t t = 0; t < n; ++t) {
    for (int32_t i : S.RowOnes(t)) {
      if (i >= t) {
        throw InternalError(fmt::format("S[{}][{}] = 1 holds a value ahead of the frontier", t, i));
      }
    }
    R.Set(t, t);
    if (t + 1 < n) {
      for (int32_t v : S.RowOnes(t + 1)) {
        if (!S.Get(t, v)) R.Set(t, v);
      }
    }
    for (int32_t v = t; v >= 0; --v) {
      if (!R.Get(t, v)) continue;
      for (int32_t u : graph.preds(v)) {
        if (!R.Get(t, u) && !S.Get(t, u)) R.Set(t, u);
      }
    }
  }
  return {std::move(R), std::move(S)};
}

}  // namespace remat
