// The absence-gap lower bound: a small covering problem whose optimum bounds the cost of every
// schedule under docs/design.md §3 from below, at sizes where the Checkmate LP cannot be built
// (proof in docs/solvers.md, "The absence-gap bound").
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "core/graph.h"
#include "solvers/solver_types.h"

namespace remat {

struct AbsenceBoundOptions {
  double time_limit_s = 10;  // CBC's limit; the bound is CBC's proven dual bound when it stops
  int32_t threads = 1;
  bool verbose = false;
  // Stop as soon as the bound reaches this cost (graph units): the caller needs no tighter one,
  // say to prove a schedule it holds within a gap target (BoundNeededFor).
  double target_cost = std::numeric_limits<double>::infinity();
  // Lemma 4 of docs/solvers.md: an absent value whose covering input is dead charges that
  // input's re-evaluation too. False gives the plain covering problem (for comparison).
  bool couple_inputs = true;
  // Lemma 5: how far up a chain of coupling inputs (p's own coupling input, and so on) an
  // absence is linked; 1 is Lemma 4 alone. A pointwise chain such as GPT-2's tanh GELU is
  // eight operations long.
  int32_t coupling_depth = 8;
  // Lemma 6: a value without an input that covers all its consumers is coupled to an input
  // with room for its bytes (the consumers coupled to an input never exceed its bytes). False
  // couples only through inputs that cover all their consumers (Lemmas 4 and 5 alone).
  bool couple_by_room = true;
  // CBC runs after the LP relaxation only on coverings of at most this many nonzeros (its
  // memory grows with them: about 200 MB at 400,000); above, the LP relaxation is the bound.
  int64_t max_cbc_terms = 100'000;
  // The covering's rows hold at most this many terms: when the overflowing cuts hold more,
  // those that overflow most get rows (docs/solvers.md).
  int64_t max_row_terms = 500'000;
};

struct AbsenceBound {
  // kOptimal: the covering problem was solved; kFeasible: stopped early, `cost` is the larger of
  // its LP relaxation's optimum and CBC's proven dual bound (still valid); kInfeasible: no schedule fits (a node and its inputs alone exceed
  // the budget); kError: no bound (cost = the sum of node costs, which is always valid).
  SolveStatus status = SolveStatus::kError;
  double cost = 0;          // graph units: a lower bound on every schedule's cost
  double solve_time_s = 0;
  int32_t columns = 0;      // one binary per (value, use interval) that some memory row names
  int32_t rows = 0;         // one covering row per stage whose frontier cut overflows
  std::string message;
};

// For `budget_bytes` of activation memory. Never throws for solver trouble.
AbsenceBound AbsenceGapLowerBound(const Graph& graph, int64_t budget_bytes,
                                  const AbsenceBoundOptions& options = {});

}  // namespace remat
