// The Checkmate MILP (DESIGN §4, paper §4) on the solver-neutral LinearModel, one function per
// constraint family, with exact gcd scaling and safe reductions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/stage_matrix.h"
#include "core/graph.h"
#include "core/schedule.h"
#include "solvers/linear_model.h"

namespace remat {

struct CheckmateModelOptions {
  bool integer = true;          // false: every column continuous in its bounds (LP relaxation)
  bool reductions = true;       // last-use fixing and dominance rows (docs/solvers.md)
  bool knapsack_rows = true;    // frontier-cut memory rows over S
  // A new hold of a frontier clique needs a held ancestor or a recomputed source (issue 12)
  bool clique_ancestor_rows = true;
};

struct ModelSize {
  int32_t columns = 0;
  int32_t integer_columns = 0;
  int32_t rows = 0;
  int64_t nonzeros = 0;
};

// Column indices of one stage-unrolled model. Absent variables (fixed at 0 by the frontier or
// a reduction) have index -1; R[t][t] is the constant 1 and has no column.
class CheckmateModel {
 public:
  static constexpr int32_t kAbsent = -1;

  int32_t stages() const { return n_; }
  int32_t R(int32_t t, int32_t i) const { return i < t ? r_[Tri(t, i)] : kAbsent; }
  int32_t S(int32_t t, int32_t i) const { return i < t ? s_[Tri(t, i)] : kAbsent; }

  LinearModel lp;
  int64_t byte_scale = 1;     // bytes and budget are divided by this gcd
  double cost_scale = 1;      // costs are divided by this
  int64_t scaled_budget = 0;
  double objective_constant = 0;  // scaled cost of the frontier nodes, which always run
  ModelSize full_size;        // before reductions (the plain paper formulation, FREE binary)
  ModelSize size;             // as built
  // A row without variables failed at build time (e.g. a node with its inputs exceeds the
  // budget): the model is infeasible without asking a solver.
  bool proven_infeasible = false;

  // Unscaled objective of the model for a solution's objective value.
  double CostOf(double objective) const { return (objective + objective_constant) * cost_scale; }
  // The checkpoint matrix of a solution: S[t][i] = 1 where the column is >= threshold.
  StageMatrix DecodeS(const std::vector<double>& values, double threshold = 0.5) const;
  // A full assignment (R, S, FREE, U) reproducing `schedule` in this model; used as MIP start.
  std::vector<double> Assignment(const Graph& graph, const Schedule& schedule) const;

 private:
  friend class CheckmateModelBuilder;
  size_t Tri(int32_t t, int32_t i) const {
    return static_cast<size_t>(t) * (t - 1) / 2 + static_cast<size_t>(i);
  }
  struct FreeColumn {
    int32_t t, i, k, column;  // FREE[t][(i, k)]: after node k runs in stage t, free i
  };
  int32_t n_ = 0;
  std::vector<int32_t> r_, s_;             // lower triangle (i < t), kAbsent where fixed
  std::vector<int32_t> u_first_;           // U[t][k] = u_first_[t] + k, k = 0..t
  std::vector<FreeColumn> frees_;
};

// Builds the model for `budget_bytes` of activation memory. Throws InputError when the budget
// is negative.
CheckmateModel BuildCheckmateModel(const Graph& graph, int64_t budget_bytes,
                                   const CheckmateModelOptions& options = {});

// The stage after which node i can never be needed: L(i) = max(i, L(j) for successors j).
std::vector<int32_t> LastPossibleUse(const Graph& graph);

}  // namespace remat
