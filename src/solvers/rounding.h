// The LP-rounding approximation of docs/design.md §5: solve the relaxation at (1 - eps) of the
// budget, round S, rebuild R by the R-from-S rule, keep the cheapest rounding that fits.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/graph.h"
#include "solvers/checkmate_solver.h"

namespace remat {

// The LP relaxation at (1 - eps) of a budget: solved once per budget and shared by both
// roundings (a skipped or failed solve is shared too, so it is not retried).
struct Relaxation {
  int64_t budget_bytes = 0;  // the full budget it was solved for
  double eps = 0;
  // The budget the LP saw: (1 - eps) of the full budget, or the full budget itself when that
  // is below what any schedule needs (say, under the minimum peak) or the LP is infeasible there.
  int64_t lp_budget_bytes = 0;
  std::string note;          // why the LP saw the full budget, when it did
  CheckmateModel model;
  SolverOutput out;
};

// `options.time_limit_s` bounds model building and the solve; a model estimated too big for
// it is skipped (status time_limit_no_solution, with the reason in the message).
std::shared_ptr<const Relaxation> SolveRelaxation(const Graph& graph, int64_t budget_bytes,
                                                  double eps, const LpOptions& options);

struct RoundingOptions {
  double eps = 0.1;  // the LP sees (1 - eps) * budget, leaving room for rounding
  std::vector<double> thresholds = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9};
  LpOptions lp;
  std::shared_ptr<const Relaxation> relaxation;  // reused when it matches budget and eps
};

// Two-phase deterministic rounding: S = [S* >= theta] for each theta.
OptimizerResult SolveApproxDeterministic(const Graph& graph, int64_t budget_bytes,
                                         const RoundingOptions& options = {});

struct RandomizedRoundingOptions {
  double eps = 0.1;
  int32_t rounds = 20;
  uint32_t seed = 1;
  LpOptions lp;
  std::shared_ptr<const Relaxation> relaxation;  // reused when it matches budget and eps
};

// Randomized rounding: S = 1 with probability S*, best of `rounds` seeded draws.
OptimizerResult SolveApproxRandomized(const Graph& graph, int64_t budget_bytes,
                                      const RandomizedRoundingOptions& options = {});

}  // namespace remat
