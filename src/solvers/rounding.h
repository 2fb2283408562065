// The LP-rounding approximation of DESIGN §5: solve the relaxation at (1 - eps) of the
// budget, round S, rebuild R by the R-from-S rule, keep the cheapest rounding that fits.
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "solvers/checkmate_solver.h"

namespace remat {

struct RoundingOptions {
  double eps = 0.1;  // the LP sees (1 - eps) * budget, leaving room for rounding
  std::vector<double> thresholds = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  LpOptions lp;
};

// Two-phase deterministic rounding: S = [S* >= theta] for each theta.
OptimizerResult SolveApproxDeterministic(const Graph& graph, int64_t budget_bytes,
                                         const RoundingOptions& options = {});

struct RandomizedRoundingOptions {
  double eps = 0.1;
  int32_t rounds = 20;
  uint32_t seed = 1;
  LpOptions lp;
};

// Randomized rounding: S = 1 with probability S*, best of `rounds` seeded draws.
OptimizerResult SolveApproxRandomized(const Graph& graph, int64_t budget_bytes,
                                      const RandomizedRoundingOptions& options = {});

}  // namespace remat
