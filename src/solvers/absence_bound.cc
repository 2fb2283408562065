// The absence-gap relaxation (docs/solvers.md): a value that is absent at some stage boundary
// between two consecutive uses is recomputed at least once in that interval, and at the
// allocation of each frontier node every value held into the next stage is live.
#include "solvers/absence_bound.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "solvers/cbc_mip.h"
#include "solvers/linear_model.h"

namespace remat {
namespace {

// The CBC bound is exact only up to its tolerances; shave it so that rounding in the solver
// never lifts it above the true optimum of the covering problem.
constexpr double kRelativeSafety = 1e-6;

struct CoveringModel {
  LinearModel lp;
  bool infeasible = false;
  int32_t stage = -1;  // the stage that proves infeasibility
};

CoveringModel BuildCovering(const Graph& graph, int64_t budget_bytes, double cost_scale) {
  const int32_t n = graph.size();
  CoveringModel model;
  // column[e] for the interval that ends at the e-th consumer of u (succs(u)[e]), created on
  // first use; -1 while no row names it.
  std::vector<std::vector<int32_t>> column(n);
  for (int32_t u = 0; u < n; ++u) column[u].assign(graph.succs(u).size(), -1);
  std::vector<char> is_pred(n, 0);
  // Values alive across boundary t+1 in the no-remat schedule: u < t with a consumer > t.
  // Maintained incrementally: `open` holds u while last_consumer(u) > t.
  std::vector<int32_t> open;
  for (int32_t t = 0; t < n; ++t) {
    for (int32_t p : graph.preds(t)) is_pred[p] = 1;
    int64_t fixed = graph.node(t).bytes;
    for (int32_t p : graph.preds(t)) fixed += graph.node(p).bytes;
    const int64_t capacity = budget_bytes - fixed;
    if (capacity < 0) {
      model.infeasible = true;
      model.stage = t;
      return model;
    }
    open.erase(std::remove_if(open.begin(), open.end(),
                              [&](int32_t u) { return graph.last_consumer(u) <= t; }),
               open.end());
    int64_t held = 0;
    std::vector<std::pair<int32_t, int32_t>> members;  // (u, index of its interval's end)
    for (int32_t u : open) {
      if (is_pred[u]) continue;
      const std::vector<int32_t>& succs = graph.succs(u);
      // The interval holding boundary t+1 ends at the first consumer after t.
      const int32_t e = static_cast<int32_t>(
          std::upper_bound(succs.begin(), succs.end(), t) - succs.begin());
      held += graph.node(u).bytes;
      members.emplace_back(u, e);
    }
    if (held > capacity) {
      std::vector<Term> terms;
      terms.reserve(members.size());
      for (const auto& [u, e] : members) {
        int32_t& c = column[u][e];
        if (c < 0) {
          c = model.lp.AddColumn({.lower = 0, .upper = 1,
                                  .objective = graph.node(u).cost / cost_scale,
                                  .integer = true});
        }
        terms.push_back({c, static_cast<double>(graph.node(u).bytes)});
      }
      model.lp.AddRow(static_cast<double>(held - capacity), std::move(terms), kInfinity);
    }
    for (int32_t p : graph.preds(t)) is_pred[p] = 0;
    if (graph.last_consumer(t) > t) open.push_back(t);
  }
  return model;
}

}  // namespace

AbsenceBound AbsenceGapLowerBound(const Graph& graph, int64_t budget_bytes,
                                  const AbsenceBoundOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  AbsenceBound bound;
  bound.cost = graph.total_cost();  // every node runs at least once
  double max_cost = 0;
  for (const Node& node : graph.nodes()) max_cost = std::max(max_cost, node.cost);
  const double cost_scale = max_cost > 0 ? max_cost : 1.0;
  const CoveringModel model = BuildCovering(graph, budget_bytes, cost_scale);
  auto finish = [&] {
    bound.solve_time_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return bound;
  };
  if (model.infeasible) {
    bound.status = SolveStatus::kInfeasible;
    bound.message = fmt::format("node {} '{}' and its inputs alone exceed the budget",
                                model.stage, graph.node(model.stage).name);
    return finish();
  }
  bound.columns = model.lp.num_columns();
  bound.rows = model.lp.num_rows();
  if (bound.rows == 0) {
    bound.status = SolveStatus::kOptimal;  // no frontier cut overflows: no forced recomputation
    return finish();
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const SolverOutput out = SolveMipWithCbc(
      model.lp, {},
      {.time_limit_s = std::max(0.5, options.time_limit_s - elapsed),
       .threads = options.threads,
       .relative_gap = 1e-6,
       .verbose = options.verbose});
  bound.message = out.message;
  // Every row is satisfiable (dropping all the values it names sheds `held` >= its demand), so
  // only the dual bound matters: CBC's proven bound, or the optimum itself when it has none.
  double extra = 0;
  if (std::isfinite(out.bound)) {
    extra = std::isfinite(out.objective) ? std::min(out.bound, out.objective) : out.bound;
  } else if (out.status == SolveStatus::kOptimal && std::isfinite(out.objective)) {
    extra = out.objective;
  } else {
    bound.status = SolveStatus::kError;
    if (bound.message.empty()) bound.message = "CBC returned no bound";
    return finish();
  }
  bound.status = out.status == SolveStatus::kOptimal ? SolveStatus::kOptimal : SolveStatus::kFeasible;
  extra = std::max(0.0, extra) * (1 - kRelativeSafety) * cost_scale;
  bound.cost += extra;
  return finish();
}

}  // namespace remat
