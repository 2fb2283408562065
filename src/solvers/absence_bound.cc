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
#include "solvers/clp_lp.h"
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
  int32_t truncated_at = -1;  // rows from this stage on were left out (time)
  int32_t rows_left_out = 0;  // overflowing stages given no row (size)
  int32_t overflowing = 0;    // stages whose cut overflows
  int64_t terms = 0;          // nonzeros of the covering rows
};

// CBC stops after this many seconds without progress: the LP relaxation, solved first, holds
// nearly all of the bound on the graphs measured (docs/solvers.md).
constexpr double kCoveringPatienceS = 1.0;

// CLP's optimum is exact up to its dual feasibility tolerance (1e-7) per column, each column a
// binary in [0, 1]: the LP bound is lowered by this much per column before it is used.
constexpr double kLpTolerancePerColumn = 1e-7;

// The input through which a value is coupled (Lemmas 4 and 6 of docs/solvers.md): an input p
// whose bytes cover those of all the consumers coupled to it, so that holding p in place of
// absent coupled consumers never saves memory. First every consumer of an input that covers all
// its consumers together (a multi-output node and its members, say) takes the costliest such
// input; then a value without one takes the costliest input with room left for its bytes,
// among inputs that are dead before the value's last read (elsewhere coupling cannot apply):
// a layer norm's output read in backward, coupled to the residual it normalizes. -1: none.
std::vector<int32_t> CouplingInputs(const Graph& graph, bool by_room) {
  const int32_t n = graph.size();
  std::vector<bool> covers(static_cast<size_t>(n), false);
  std::vector<int64_t> room(static_cast<size_t>(n), 0);  // bytes not yet coupled to p
  for (int32_t p = 0; p < n; ++p) {
    int64_t consumers_bytes = 0;
    for (const int32_t w : graph.succs(p)) consumers_bytes += graph.node(w).bytes;
    covers[static_cast<size_t>(p)] =
        graph.node(p).cost > 0 && !graph.succs(p).empty() && graph.node(p).bytes >= consumers_bytes;
    room[static_cast<size_t>(p)] = graph.node(p).cost > 0 ? graph.node(p).bytes : 0;
  }
  std::vector<int32_t> coupling(static_cast<size_t>(n), -1);
  for (int32_t u = 0; u < n; ++u) {
    for (const int32_t p : graph.preds(u)) {
      if (!covers[static_cast<size_t>(p)]) continue;
      int32_t& best = coupling[static_cast<size_t>(u)];
      if (best < 0 || graph.node(p).cost > graph.node(best).cost) best = p;
    }
  }
  if (!by_room) return coupling;
  for (int32_t u = 0; u < n; ++u) {
    int32_t& best = coupling[static_cast<size_t>(u)];
    const std::vector<int32_t>& reads = graph.succs(u);  // ascending
    if (best >= 0 || reads.empty()) continue;
    for (const int32_t p : graph.preds(u)) {
      // Coupling applies only to rows after p's death and before u's last read.
      if (covers[static_cast<size_t>(p)] || room[static_cast<size_t>(p)] < graph.node(u).bytes ||
          graph.last_consumer(p) + 1 >= reads.back()) {
        continue;
      }
      if (best < 0 || graph.node(p).cost > graph.node(best).cost) best = p;
    }
    if (best >= 0) room[static_cast<size_t>(best)] -= graph.node(u).bytes;
  }
  return coupling;
}

// The re-evaluations of coupling inputs (Lemmas 4 and 5): for an input p, its consumers'
// consumers after p's last consumer, sorted, cut the stages after it into intervals, the last
// one reaching the end of the graph, one binary each ("p is evaluated again in this
// interval"), created when a coupled column first needs it.
class Reevaluations {
 public:
  Reevaluations(const Graph& graph, double cost_scale)
      : graph_(graph), cost_scale_(cost_scale), ends_(graph.size()), columns_(graph.size()) {}

  // The columns of p's intervals that meet (from, to], where from is at or after p's last
  // consumer. For a coupling input of a value read at `from` and `to` (Lemma 4) those
  // intervals make up (from, to] exactly; further up a chain (Lemma 5) the first and last may
  // reach beyond it.
  std::vector<int32_t> Meeting(LinearModel& lp, int32_t p, int32_t from, int32_t to) {
    std::vector<int32_t>& ends = ends_[static_cast<size_t>(p)];
    std::vector<int32_t>& columns = columns_[static_cast<size_t>(p)];
    const int32_t last = graph_.last_consumer(p);
    if (columns.empty()) {  // p's intervals, cut the first time a column needs them
      for (const int32_t w : graph_.succs(p)) {
        for (const int32_t c : graph_.succs(w)) {
          if (c > last) ends.push_back(c);
        }
      }
      ends.push_back(graph_.size());  // the stages after every cut
      std::sort(ends.begin(), ends.end());
      ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
      columns.assign(ends.size(), -1);
    }
    std::vector<int32_t> meeting;
    for (auto e = std::upper_bound(ends.begin(), ends.end(), from); e != ends.end(); ++e) {
      const int32_t starts_after = e == ends.begin() ? last : *(e - 1);
      if (starts_after >= to) break;
      int32_t& c = columns[static_cast<size_t>(e - ends.begin())];
      if (c < 0) {
        c = lp.AddColumn({.lower = 0, .upper = 1, .objective = graph_.node(p).cost / cost_scale_,
                          .integer = true});
      }
      meeting.push_back(c);
    }
    return meeting;
  }

 private:
  const Graph& graph_;
  double cost_scale_;
  std::vector<std::vector<int32_t>> ends_;     // per input p: its interval ends, sorted
  std::vector<std::vector<int32_t>> columns_;  // per input p: a column per interval, or -1
};

// A frontier cut that overflows: at `stage`, the values held across it in the no-remat
// schedule (its inputs aside: `terms` of them) exceed what the budget leaves beside the
// stage's own output, workspace and inputs by `deficit` bytes.
struct Cut {
  int64_t deficit;
  int64_t terms;
  int32_t stage;
};

// The overflowing cuts in stage order, up to the first stage whose own memory exceeds the
// budget (BuildCovering's infeasibility proof). Values alive across boundary t+1 are u < t
// with a consumer > t; their total is kept exactly, so the pass is linear.
std::vector<Cut> OverflowingCuts(const Graph& graph, int64_t budget_bytes) {
  const int32_t n = graph.size();
  std::vector<Cut> cuts;
  std::vector<std::vector<int32_t>> expires(n);  // expires[t]: values whose last consumer is t
  int64_t open_bytes = 0, open_count = 0;
  for (int32_t t = 0; t < n; ++t) {
    // Live while t first runs: its output, its workspace and its inputs (docs/design.md §3).
    int64_t fixed = graph.node(t).bytes + graph.node(t).workspace_bytes;
    for (int32_t p : graph.preds(t)) fixed += graph.node(p).bytes;
    const int64_t capacity = budget_bytes - fixed;
    if (capacity < 0) break;
    for (int32_t u : expires[t]) {
      open_bytes -= graph.node(u).bytes;
      --open_count;
    }
    int64_t held = open_bytes, terms = open_count;
    for (int32_t p : graph.preds(t)) {
      if (graph.last_consumer(p) > t) {  // an input, not held
        held -= graph.node(p).bytes;
        --terms;
      }
    }
    if (held > capacity) cuts.push_back({held - capacity, terms, t});
    if (graph.last_consumer(t) > t) {
      open_bytes += graph.node(t).bytes;
      ++open_count;
      expires[graph.last_consumer(t)].push_back(t);
    }
  }
  return cuts;
}

// Which cuts get a covering row: all when their terms fit `max_terms`, else those that
// overflow most first (ties by stage), as many as fit. A subset of the rows is a relaxation,
// so the bound stays valid; the largest overflows are where a schedule must give up most, at
// the start of backward in a deep network, which rows taken in stage order would reach last.
std::vector<bool> ChooseRows(std::vector<Cut> cuts, int32_t n, int64_t max_terms) {
  int64_t total_terms = 0;
  for (const Cut& cut : cuts) total_terms += cut.terms;
  if (total_terms > max_terms) {
    std::stable_sort(cuts.begin(), cuts.end(),
                     [](const Cut& a, const Cut& b) { return a.deficit > b.deficit; });
  }
  std::vector<bool> chosen(static_cast<size_t>(n), false);
  int64_t terms = 0;
  for (const Cut& cut : cuts) {
    if (terms + cut.terms > max_terms) continue;
    terms += cut.terms;
    chosen[cut.stage] = true;
  }
  return chosen;
}

// Lemmas 4 and 5: `column` ("u and its chain absent together somewhere in (from, to]") is at
// most the re-evaluations of each chain member that meet (from, to], for the members (u's
// coupling input, its own, ...) dead by `from`: one row per member.
void LinkCouplingChain(LinearModel& lp, Reevaluations& reevaluations, const Graph& graph,
                       const std::vector<int32_t>& coupling, int32_t coupling_depth,
                       int32_t column, int32_t from, int32_t to, int32_t u) {
  int32_t p = coupling[static_cast<size_t>(u)];
  for (int32_t depth = 0; p >= 0 && depth < coupling_depth && from >= graph.last_consumer(p);
       ++depth, p = coupling[static_cast<size_t>(p)]) {
    std::vector<Term> link = {{column, 1.0}};
    for (const int32_t r : reevaluations.Meeting(lp, p, from, to)) link.push_back({r, -1.0});
    lp.AddRow(-kInfinity, std::move(link), 0.0);
  }
}

CoveringModel BuildCovering(const Graph& graph, int64_t budget_bytes, double cost_scale,
                            std::chrono::steady_clock::time_point deadline, int32_t coupling_depth,
                            bool couple_by_room, int64_t max_row_terms) {
  const int32_t n = graph.size();
  CoveringModel model;
  const std::vector<int32_t> coupling =
      coupling_depth > 0 ? CouplingInputs(graph, couple_by_room)
                         : std::vector<int32_t>(static_cast<size_t>(n), -1);
  Reevaluations reevaluations(graph, cost_scale);
  const std::vector<Cut> cuts = OverflowingCuts(graph, budget_bytes);
  const std::vector<bool> chosen = ChooseRows(cuts, n, max_row_terms);
  std::vector<int64_t> deficit(static_cast<size_t>(n), 0);
  for (const Cut& cut : cuts) deficit[cut.stage] = cut.deficit;
  model.overflowing = static_cast<int32_t>(cuts.size());
  // column[e] for the interval that ends at the e-th consumer of u (succs(u)[e]), created on
  // first use; -1 while no row names it.
  std::vector<std::vector<int32_t>> column(n);
  // For an interval in which u's coupling input dies (Lemma 6): the column of its part after
  // that, or -1.
  std::vector<std::vector<int32_t>> coupled_column(n);
  for (int32_t u = 0; u < n; ++u) {
    column[u].assign(graph.succs(u).size(), -1);
    coupled_column[u].assign(graph.succs(u).size(), -1);
  }
  // Values alive across boundary t+1 in the no-remat schedule: u < t with a consumer > t.
  // `open` lists them, with expired entries dropped only when a row is built (each entry is
  // dropped once), so the pass is linear plus the rows' size.
  std::vector<int32_t> open;
  for (int32_t t = 0; t < n; ++t) {
    int64_t fixed = graph.node(t).bytes + graph.node(t).workspace_bytes;
    for (int32_t p : graph.preds(t)) fixed += graph.node(p).bytes;
    if (budget_bytes < fixed) {  // the stage alone exceeds the budget (OverflowingCuts)
      model.infeasible = true;
      model.stage = t;
      return model;
    }
    if (deficit[t] > 0 && !chosen[t]) ++model.rows_left_out;
    if (chosen[t] && model.truncated_at < 0 &&
        model.lp.num_rows() % 64 == 0 &&
        (std::chrono::steady_clock::now() > deadline || DeadlinePassed())) {
      // Past the deadline (read every 64 rows) no more rows are built: rows left out only
      // weaken the bound, which stays valid.
      model.truncated_at = t;
    }
    if (chosen[t] && model.truncated_at < 0) {
      std::erase_if(open, [&](int32_t u) { return graph.last_consumer(u) <= t; });
      std::vector<Term> terms;
      terms.reserve(open.size());
      for (int32_t u : open) {
        const std::vector<int32_t>& succs = graph.succs(u);
        if (std::binary_search(succs.begin(), succs.end(), t)) continue;  // an input of t
        // The interval holding boundary t+1 ends at the first consumer after t.
        const int32_t e = static_cast<int32_t>(
            std::upper_bound(succs.begin(), succs.end(), t) - succs.begin());
        // Lemmas 4 and 5: from the death of u's coupling input p on (the interval's start,
        // or p's last consumer inside the interval: Lemma 6), a row's column means "u and p
        // (and p's own, and so on up the chain) absent together somewhere from there to the
        // interval's end", and each is evaluated again there. Rows up to p's death keep the
        // interval's own column, which is at least the coupled one.
        const int32_t from = e == 0 ? u : succs[static_cast<size_t>(e - 1)];
        const int32_t to = succs[static_cast<size_t>(e)];
        const int32_t p = coupling[static_cast<size_t>(u)];
        const int32_t dead = p >= 0 ? std::max(from, graph.last_consumer(p)) : from;
        int32_t& c = column[u][e];
        if (c < 0) {
          c = model.lp.AddColumn({.lower = 0, .upper = 1,
                                  .objective = graph.node(u).cost / cost_scale,
                                  .integer = true});
          // p dead from the start: every row of the interval takes the coupled meaning.
          if (p >= 0 && dead == from) {
            LinkCouplingChain(model.lp, reevaluations, graph, coupling, coupling_depth, c, from,
                              to, u);
          }
        }
        int32_t row_column = c;
        if (dead > from && t > dead) {
          int32_t& coupled = coupled_column[u][e];
          if (coupled < 0) {
            coupled = model.lp.AddColumn({.lower = 0, .upper = 1, .integer = true});
            model.lp.AddRow(0.0, {{c, 1.0}, {coupled, -1.0}}, kInfinity);  // c >= coupled
            LinkCouplingChain(model.lp, reevaluations, graph, coupling, coupling_depth, coupled,
                              dead, to, u);
          }
          row_column = coupled;
        }
        terms.push_back({row_column, static_cast<double>(graph.node(u).bytes)});
      }
      model.terms += static_cast<int64_t>(terms.size());
      model.lp.AddRow(static_cast<double>(deficit[t]), std::move(terms), kInfinity);
    }
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
  // Building the rows may take at most half the time; CBC gets the rest.
  const CoveringModel model = BuildCovering(
      graph, budget_bytes, cost_scale,
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(options.time_limit_s / 2)),
      options.couple_inputs ? options.coupling_depth : 0, options.couple_by_room,
      options.max_row_terms);
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
  if (model.rows_left_out > 0) {
    bound.message = fmt::format("{} of {} overflowing stages without a row (the smallest "
                                "overflows: the rows' size)",
                                model.rows_left_out, model.overflowing);
  }
  if (model.truncated_at >= 0) {
    bound.message += fmt::format("{}rows from stage {} on left out (time)",
                                 bound.message.empty() ? "" : "; ", model.truncated_at);
  }
  if (bound.rows == 0) {
    bound.status = SolveStatus::kOptimal;  // no frontier cut overflows: no forced recomputation
    return finish();
  }
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // The LP relaxation first: any value of it is at most the covering's optimum, it takes a
  // fraction of a second where CBC may take its whole limit, and it stays when CBC is stopped
  // without a bound.
  double extra = -1;  // in the covering's units; < 0 while nothing is proven
  const SolverOutput relaxed =
      SolveLpWithClp(model.lp,
                     {.time_limit_s = std::max(0.1, (options.time_limit_s - elapsed()) / 2),
                      .verbose = options.verbose});
  if (relaxed.status == SolveStatus::kOptimal && std::isfinite(relaxed.objective)) {
    extra = std::max(0.0, relaxed.objective - kLpTolerancePerColumn * model.lp.num_columns());
  }
  bool solved = false;  // CBC proved the covering's optimum
  if (model.terms > options.max_cbc_terms) {
    bound.message += (bound.message.empty() ? "" : "; ") +
                     fmt::format("the LP relaxation only ({} nonzeros: CBC skipped)", model.terms);
  } else {
    // CBC's process is stopped at the end of the time left (its own limit, which it checks
    // only in some phases, comes a little earlier), so the bound keeps its limit.
    const double left_s = std::max(0.5, options.time_limit_s - elapsed());
    const SolverOutput out = SolveMipWithCbc(
        model.lp, {},
        {.time_limit_s = 0.9 * left_s,
         .hard_deadline_s = left_s,
         .threads = options.threads,
         .relative_gap = 1e-6,
         .verbose = options.verbose,
         // In the covering's units: the inverse of the conversion below.
         .stop_at_bound =
             (options.target_cost - bound.cost) / ((1 - kRelativeSafety) * cost_scale),
         .patience_s = kCoveringPatienceS});
    solved = out.status == SolveStatus::kOptimal;
    if (!out.message.empty()) {
      bound.message += (bound.message.empty() ? "" : "; ") + out.message;
    }
    // Every row is satisfiable (dropping all the values it names sheds `held` >= its demand),
    // so only the dual bound matters: CBC's proven bound, or the optimum itself when it has
    // none.
    if (std::isfinite(out.bound)) {
      extra = std::max(extra, std::isfinite(out.objective) ? std::min(out.bound, out.objective)
                                                           : out.bound);
    } else if (out.status == SolveStatus::kOptimal && std::isfinite(out.objective)) {
      extra = std::max(extra, out.objective);
    }
  }
  if (extra < 0) {
    bound.status = SolveStatus::kError;
    if (bound.message.empty()) bound.message = "neither CLP nor CBC returned a bound";
    return finish();
  }
  bound.status = solved ? SolveStatus::kOptimal : SolveStatus::kFeasible;
  extra = std::max(0.0, extra) * (1 - kRelativeSafety) * cost_scale;
  bound.cost += extra;
  return finish();
}

}  // namespace remat
