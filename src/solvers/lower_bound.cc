// Best-of bound: absence-gap first (seconds at 1,000 nodes), then the LP relaxation with the
// time that is left, skipped when its model is too large for that time.
#include "solvers/lower_bound.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/cancellation.h"
#include "solvers/absence_bound.h"
#include "solvers/checkmate_solver.h"

namespace remat {

int64_t EstimateCheckmateColumns(const Graph& graph) {
  const int64_t n = graph.size();
  int64_t columns = n * (n - 1) + n * (n + 1) / 2;
  for (const Edge& e : graph.edges()) columns += n - e.dst;
  return columns;
}

bool LpFitsTime(int64_t columns, double time_limit_s) {
  // CLP's dual simplex on these models: about 200k columns per minute solved on one core of
  // the benchmark machine (MobileNet at 185 nodes: ~2.5 s), and a margin for model building.
  constexpr double kColumnsPerSecond = 2000;
  return static_cast<double>(columns) <= kColumnsPerSecond * time_limit_s;
}

BestBound BestLowerBound(const Graph& graph, int64_t budget_bytes, const BoundOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // Its parts keep the caller's deadline too (core/cancellation.h); a bound is never abandoned
  // half-built, only cut short where its parts stop with what they have.
  const DeadlineScope deadline(options.time_limit_s, /*stoppable=*/false);
  BestBound best;
  best.cost = graph.total_cost();
  best.source = "sum of node costs";
  const double absence_limit = options.use_lp ? options.time_limit_s / 3 : options.time_limit_s;
  const AbsenceBound absence = AbsenceGapLowerBound(
      graph, budget_bytes,
      {.time_limit_s = absence_limit, .threads = options.threads, .verbose = options.verbose,
       .target_cost = options.target_cost});
  std::string absence_note;
  // Either bound may prove that no schedule fits; that answer ends the call.
  auto infeasible = [&](const char* source, const std::string& message) {
    best.status = SolveStatus::kInfeasible;
    best.source = source;
    best.note = message;
    best.seconds = elapsed();
    return best;
  };
  if (absence.status == SolveStatus::kInfeasible) return infeasible("absence-gap", absence.message);
  if (absence.status == SolveStatus::kOptimal || absence.status == SolveStatus::kFeasible) {
    absence_note = fmt::format("absence-gap {:.6g} ({}{} cols x {} rows, {:.2f} s)", absence.cost,
                               absence.status == SolveStatus::kFeasible ? "stopped early: the LP relaxation's or CBC's bound, " : "",
                               absence.columns, absence.rows, absence.solve_time_s);
    if (absence.cost > best.cost) {
      best.cost = absence.cost;
      best.source = "absence-gap";
    }
  } else {
    absence_note = fmt::format("absence-gap failed ({})", absence.message);
  }
  std::string lp_note;
  const double left = std::min(SecondsLeft(), options.time_limit_s - elapsed());
  const int64_t columns = EstimateCheckmateColumns(graph);
  if (!options.use_lp) {
    lp_note = "LP not asked for";
  } else if (best.cost >= options.target_cost) {
    lp_note = "LP not needed: the absence-gap bound meets the target";
  } else if (!LpFitsTime(columns, left)) {
    lp_note = fmt::format("LP skipped: its model has about {} columns, too many for {:.0f} s",
                          columns, std::max(0.0, left));
  } else {
    const LowerBound lp = LpLowerBound(graph, budget_bytes,
                                       {.time_limit_s = left, .verbose = options.verbose});
    if (lp.status == SolveStatus::kInfeasible) return infeasible("LP relaxation", lp.message);
    if (lp.status == SolveStatus::kOptimal) {
      lp_note = fmt::format("LP {:.6g} ({:.2f} s)", lp.cost, lp.solve_time_s);
      if (lp.cost > best.cost) {
        best.cost = lp.cost;
        best.source = "LP relaxation";
      }
    } else {
      lp_note = fmt::format("LP: {}{}", SolveStatusPhrase(lp.status),
                            lp.message.empty() ? "" : " (" + lp.message + ")");
    }
  }
  best.note = absence_note + "; " + lp_note;
  best.seconds = elapsed();
  return best;
}

}  // namespace remat
