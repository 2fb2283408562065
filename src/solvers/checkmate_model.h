// The Checkmate MILP (docs/design.md §4, paper §4) on the solver-neutral LinearModel, one function per
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
  // A new hold of a frontier clique needs a held ancestor or a recomputed source (issue 12);
  // not with `elastic`, whose memory rows may overflow.
  bool clique_ancestor_rows = true;
  // Memory may exceed the budget by a slack column whose cost outweighs all recomputation,
  // so the optimum is the least overflow first, the least cost second; an over-budget
  // schedule is then a valid MIP start (RepairByWindows).
  bool elastic = false;
  // A value freed at a position with at least this many later consumers in the stage is bound
  // by its later-reader chain (docs/solvers.md, "FREE bounds"): rows linear, not quadratic, in
  // its consumers. As tight as one row per consumer; tests lower it to 1 to use it everywhere.
  int32_t later_reader_chain_from = 8;
};

// Stages first..last (both included) of an n-stage model. The whole model is {0, n - 1}.
struct StageWindow {
  int32_t first = 0;
  int32_t last = -1;
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
  // The stages with variables: every stage, or a window's (BuildWindowModel).
  StageWindow window() const { return window_; }
  int32_t R(int32_t t, int32_t i) const { return Has(t, i) ? r_[Index(t, i)] : kAbsent; }
  // In a window model, S of the first stage is fixed (no column), like S outside the window.
  int32_t S(int32_t t, int32_t i) const { return Has(t, i) ? s_[Index(t, i)] : kAbsent; }

  LinearModel lp;
  int64_t byte_scale = 1;     // bytes and budget are divided by this gcd
  double cost_scale = 1;      // costs are divided by this
  int64_t scaled_budget = 0;
  double objective_constant = 0;  // scaled cost of the window's frontier nodes, which always run
  ModelSize full_size;        // before reductions (the plain paper formulation, FREE binary)
  ModelSize size;             // as built
  int32_t slack_column = -1;  // the elastic model's overflow column (scaled bytes), else -1
  // A row without variables failed at build time (e.g. a node with its inputs exceeds the
  // budget): the model is infeasible without asking a solver.
  bool proven_infeasible = false;

  // Unscaled objective of the model for a solution's objective value.
  double CostOf(double objective) const { return (objective + objective_constant) * cost_scale; }
  double ObjectiveOf(double cost) const { return cost / cost_scale - objective_constant; }
  // The checkpoint matrix of a solution: S[t][i] = 1 where the column is >= threshold. A window
  // model decodes onto `outside`, the fixed schedule's S, replacing the window's free stages.
  StageMatrix DecodeS(const std::vector<double>& values, double threshold = 0.5,
                      const StageMatrix* outside = nullptr) const;
  // A full assignment (R, S, FREE, U) reproducing `schedule` in this model; used as MIP start.
  std::vector<double> Assignment(const Graph& graph, const Schedule& schedule) const;

 private:
  friend class CheckmateModelBuilder;
  static size_t Tri(int32_t t, int32_t i) {
    return static_cast<size_t>(t) * (t - 1) / 2 + static_cast<size_t>(i);
  }
  bool Has(int32_t t, int32_t i) const { return i < t && t >= window_.first && t <= window_.last; }
  size_t Index(int32_t t, int32_t i) const { return Tri(t, i) - Tri(window_.first, 0); }
  struct FreeColumn {
    int32_t t, i, k, column;  // FREE[t][(i, k)]: after node k runs in stage t, free i
  };
  struct LaterReaderColumn {
    int32_t t, i, j, column;  // L[t][(i, j)]: some consumer j' >= j of i runs in stage t
  };
  int32_t n_ = 0;
  StageWindow window_;
  std::vector<int32_t> r_, s_;             // window's lower triangle (i < t), kAbsent where fixed
  std::vector<int32_t> u_first_;           // U[t][k] = u_first_[t] + k, k = 0..t
  std::vector<FreeColumn> frees_;
  std::vector<LaterReaderColumn> later_readers_;
};

// Builds the model for `budget_bytes` of activation memory. Throws InputError when the budget
// is negative.
CheckmateModel BuildCheckmateModel(const Graph& graph, int64_t budget_bytes,
                                   const CheckmateModelOptions& options = {});

// The model of the stages in `window` only, every other stage keeping `fixed`'s S (the window
// search, docs/solvers.md). S[first] and S[last + 1] become constants, so the rows of the
// window's stages are exactly the whole model's rows with those columns fixed, and the
// objective is the window's cost: outside the window R follows from S and does not change.
// `fixed` must hold nothing past a value's last possible use (LastPossibleUse); throws
// InputError for an empty window or one outside the stages.
CheckmateModel BuildWindowModel(const Graph& graph, int64_t budget_bytes, const Schedule& fixed,
                                StageWindow window, const CheckmateModelOptions& options = {});

// The stage after which node i can never be needed: L(i) = max(i, L(j) for successors j).
std::vector<int32_t> LastPossibleUse(const Graph& graph);

}  // namespace remat
