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

#include "core/cancellation.h"
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
  int32_t stage = -1;         // the stage that proves infeasibility
  int32_t truncated_at = -1;  // rows from this stage on were left out (time or size)
};

// Covering rows stop (and the bound weakens, staying valid) past this many terms.
constexpr int64_t kMaxCoveringTerms = 500'000;

CoveringModel BuildCovering(const Graph& graph, int64_t budget_bytes, double cost_scale,
                            std::chrono::steady_clock::time_point deadline) {
  const int32_t n = graph.size();
  CoveringModel model;
  // column[e] for the interval that ends at the e-th consumer of u (succs(u)[e]), created on
  // first use; -1 while no row names it.
  std::vector<std::vector<int32_t>> column(n);
  for (int32_t u = 0; u < n; ++u) column[u].assign(graph.succs(u).size(), -1);
  // Values alive across boundary t+1 in the no-remat schedule: u < t with a consumer > t.
  // `open` lists them, with expired entries dropped only when a row is built (each entry is
  // dropped once); `open_bytes` is their exact total, so stages that do not overflow cost
  // O(inputs) and the whole pass is linear plus the rows' size.
  std::vector<int32_t> open;
  std::vector<std::vector<int32_t>> expires(n);  // expires[t]: values whose last consumer is t
  int64_t open_bytes = 0;
  int64_t terms_total = 0;
  for (int32_t t = 0; t < n; ++t) {
    // Live while t first runs: its output, its workspace and its inputs (docs/design.md §3).
    int64_t fixed = graph.node(t).bytes + graph.node(t).workspace_bytes;
    for (int32_t p : graph.preds(t)) fixed += graph.node(p).bytes;
    const int64_t capacity = budget_bytes - fixed;
    if (capacity < 0) {
      model.infeasible = true;
      model.stage = t;
      return model;
    }
    for (int32_t u : expires[t]) open_bytes -= graph.node(u).bytes;
    int64_t held = open_bytes;
    for (int32_t p : graph.preds(t)) {
      if (graph.last_consumer(p) > t) held -= graph.node(p).bytes;  // an input, not held
    }
    if (held > capacity && model.truncated_at < 0 &&
        (terms_total + static_cast<int64_t>(open.size()) > kMaxCoveringTerms ||
         (model.lp.num_rows() % 64 == 0 &&
          (std::chrono::steady_clock::now() > deadline || CancelRequested())))) {
      // Past the size cap or the deadline (read every 64 rows) no more rows are built: rows
      // left out only weaken the bound, which stays valid.
      model.truncated_at = t;
    }
    if (held > capacity && model.truncated_at < 0) {
      std::erase_if(open, [&](int32_t u) { return graph.last_consumer(u) <= t; });
      std::vector<Term> terms;
      terms.reserve(open.size());
      for (int32_t u : open) {
        const std::vector<int32_t>& succs = graph.succs(u);
        if (std::binary_search(succs.begin(), succs.end(), t)) continue;  // an input of t
        // The interval holding boundary t+1 ends at the first consumer after t.
        const int32_t e = static_cast<int32_t>(
            std::upper_bound(succs.begin(), succs.end(), t) - succs.begin());
        int32_t& c = column[u][e];
        if (c < 0) {
          c = model.lp.AddColumn({.lower = 0, .upper = 1,
                                  .objective = graph.node(u).cost / cost_scale,
                                  .integer = true});
        }
        terms.push_back({c, static_cast<double>(graph.node(u).bytes)});
      }
      terms_total += static_cast<int64_t>(terms.size());
      model.lp.AddRow(static_cast<double>(held - capacity), std::move(terms), kInfinity);
    }
    if (graph.last_consumer(t) > t) {
      open.push_back(t);
      open_bytes += graph.node(t).bytes;
      expires[graph.last_consumer(t)].push_back(t);
    }
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
  // Building the rows may take at most half the time; CBC gets the rest.
  const CoveringModel model = BuildCovering(
      graph, budget_bytes, cost_scale,
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(options.time_limit_s / 2)));
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
  if (model.truncated_at >= 0) {
    bound.message = fmt::format("rows from stage {} on left out (time or size)", model.truncated_at);
  }
  if (bound.rows == 0) {
    bound.status = SolveStatus::kOptimal;  // no frontier cut overflows: no forced recomputation
    return finish();
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // CBC's process is stopped at the end of the time left (its own limit, which it checks only
  // in some phases, comes a little earlier), so the bound keeps its limit.
  const double left_s = std::max(0.5, options.time_limit_s - elapsed);
  const SolverOutput out = SolveMipWithCbc(
      model.lp, {},
      {.time_limit_s = 0.9 * left_s,
       .hard_deadline_s = left_s,
       .threads = options.threads,
       .relative_gap = 1e-6,
       .verbose = options.verbose,
       // In the covering's units: the inverse of the conversion below.
       .stop_at_bound = (options.target_cost - bound.cost) / ((1 - kRelativeSafety) * cost_scale)});
  if (!out.message.empty()) {
    bound.message += (bound.message.empty() ? "" : "; ") + out.message;
  }
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
