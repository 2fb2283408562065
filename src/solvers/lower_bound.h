// The best valid lower bound on a schedule's cost that fits in the time: the absence-gap bound
// always (it scales), and the Checkmate LP relaxation when its model is small enough to solve.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "core/graph.h"
#include "solvers/solver_types.h"

namespace remat {

struct BoundOptions {
  double time_limit_s = 60;  // the whole call: both bounds, model building included
  int32_t threads = 1;
  bool use_lp = true;        // false: the absence-gap bound only
  bool verbose = false;
  // The bound the caller needs (graph units): once the absence-gap bound reaches it, CBC stops
  // and the LP is not solved. Infinity: the best bound in the time.
  double target_cost = std::numeric_limits<double>::infinity();
};

struct BestBound {
  // kOptimal: `cost` is a valid bound; kInfeasible: proven that no schedule fits the budget.
  SolveStatus status = SolveStatus::kOptimal;
  double cost = 0;       // graph units, at least the sum of all node costs
  std::string source;    // which bound gave `cost`
  std::string note;      // both bounds' outcomes, e.g. why the LP was skipped
  double seconds = 0;
};

BestBound BestLowerBound(const Graph& graph, int64_t budget_bytes, const BoundOptions& options = {});

// Columns of the plain Checkmate model, estimated without building it: R and S below the
// diagonal, U per position, FREE per stage and edge.
int64_t EstimateCheckmateColumns(const Graph& graph);

// True when a model of that many columns can be expected to solve (LP) within `time_limit_s`
// on one core; measured in docs/BENCHMARKS.md
// ("The paper's networks: costs, gaps and bounds").
bool LpFitsTime(int64_t columns, double time_limit_s);

}  // namespace remat
