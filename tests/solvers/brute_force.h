// Brute-force oracle: the cheapest schedule within a budget over every checkpoint matrix S of
// a tiny graph (R follows from S by the rule of docs/design.md §3, which is optimal for a fixed S).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "core/recompute.h"
#include "core/simulator.h"

namespace remat::testing {

// For every distinct simulated peak, the cheapest cost among all S reaching at most that peak
// is found by sweeping once: returns (peak, cost) pairs of all S.
inline std::vector<std::pair<int64_t, double>> AllSchedules(const Graph& g) {
  const int32_t n = g.size();
  std::vector<std::pair<int32_t, int32_t>> cells;
  for (int32_t t = 1; t < n; ++t) {
    for (int32_t i = 0; i < t; ++i) cells.emplace_back(t, i);
  }
  std::vector<std::pair<int64_t, double>> outcomes;
  for (uint64_t bits = 0; bits < (uint64_t{1} << cells.size()); ++bits) {
    StageMatrix S(n, n);
    for (size_t k = 0; k < cells.size(); ++k) {
      if (bits >> k & 1) S.Set(cells[k].first, cells[k].second);
    }
    const SimulationResult sim = Simulate(g, ScheduleFromCheckpoints(g, std::move(S)));
    outcomes.emplace_back(sim.peak_bytes, sim.cost);
  }
  return outcomes;
}

// The least peak among all S (of AllSchedules' outcomes).
inline int64_t LeastPeak(const std::vector<std::pair<int64_t, double>>& outcomes) {
  int64_t least = std::numeric_limits<int64_t>::max();
  for (const auto& [peak, cost] : outcomes) least = std::min(least, peak);
  return least;
}

// The cheapest cost with peak <= budget, or +infinity.
inline double OracleCost(const std::vector<std::pair<int64_t, double>>& outcomes,
                         int64_t budget) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [peak, cost] : outcomes) {
    if (peak <= budget) best = std::min(best, cost);
  }
  return best;
}

}  // namespace remat::testing
