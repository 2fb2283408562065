// Strategies over a budget grid, with the best lower bound at each budget.
#include "planning/budget_sweep.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include <fmt/format.h>

#include "core/cancellation.h"
#include "core/errors.h"
#include "core/sizes.h"
#include "planning/budget.h"
#include "planning/budget_point.h"
#include "planning/plan_report.h"
#include "planning/time_left.h"
#include "solvers/lower_bound.h"

namespace remat {

std::vector<int64_t> BudgetGrid(int64_t from_bytes, int64_t to_bytes, int32_t points) {
  std::vector<int64_t> budgets;
  if (points <= 1 || from_bytes == to_bytes) return {to_bytes};
  const long double span = static_cast<long double>(to_bytes - from_bytes);
  for (int32_t i = 0; i < points; ++i) {
    const int64_t step =
        static_cast<int64_t>(span * static_cast<long double>(i) / static_cast<long double>(points - 1));
    const int64_t budget = i + 1 == points ? to_bytes : from_bytes + step;
    if (budgets.empty() || budgets.back() != budget) budgets.push_back(budget);
  }
  return budgets;
}

std::vector<int64_t> ResolveBudgetGrid(const BudgetRange& range, const Graph& graph,
                                       int64_t no_remat_peak_bytes) {
  const int64_t from = range.from_text.empty()
                           ? std::min(MinimumPeakLowerBound(graph), no_remat_peak_bytes)
                           : ParseBytes(range.from_text, range.from_name, no_remat_peak_bytes);
  const int64_t to = range.to_text.empty()
                         ? no_remat_peak_bytes
                         : ParseBytes(range.to_text, range.to_name, no_remat_peak_bytes);
  if (from > to) {
    const auto [from_text, to_text] = FormatBytesApart(from, to);
    throw UsageError(fmt::format("the budget range is empty: {} {} is above {} {}",
                                 range.from_name, from_text, range.to_name, to_text));
  }
  if (from <= 0) throw UsageError(range.from_name + " must be a positive size");
  return BudgetGrid(from, to, range.points);
}

int64_t SweepWorkItems(size_t budgets, size_t strategies, bool lower_bound) {
  return static_cast<int64_t>(budgets * (strategies + (lower_bound ? 1 : 0)));
}

std::vector<SweepPoint> RunBudgetSweep(const Graph& graph, const std::vector<int64_t>& budgets,
                                       const std::vector<std::string>& strategies,
                                       const SolverSettings& settings, bool lower_bound,
                                       const WorkProgress& progress, double total_time_limit_s) {
  const TimeLeft total(total_time_limit_s);
  SolverSettings quiet = settings;
  quiet.progress = false;  // the sweep's own line replaces the solver's
  std::vector<SweepPoint> points;
  for (size_t b = 0; b < budgets.size(); ++b) {
    if (CancelRequested()) break;
    SweepPoint point;
    point.budget_bytes = budgets[b];
    BudgetPointResult planned = PlanOneBudget(
        graph, point.budget_bytes,
        {.strategies = strategies, .settings = quiet, .lower_bound = lower_bound,
         .spent_note = "skipped: --total-time-limit spent", .progress = &progress,
         .where = fmt::format("at {} (budget {}/{})", FormatBytes(point.budget_bytes), b + 1,
                              budgets.size())},
        total);
    if (planned.bound) {
      const BestBound& best = *planned.bound;
      point.lower_bound_status = SolveStatusName(best.status);
      point.lower_bound_seconds = best.seconds;
      if (best.status == SolveStatus::kOptimal) {
        point.lower_bound = best.cost;
        point.lower_bound_source = best.source;
      }
    } else {
      point.lower_bound_status = lower_bound ? "skipped: --total-time-limit spent" : "skipped";
    }
    point.rows = std::move(planned.rows);
    // One bound per budget: optimal's own when it proved a higher one (or the only one).
    if (point.lower_bound_status != SolveStatusName(SolveStatus::kInfeasible)) {
      const std::optional<double> best = BestOfBounds(point.lower_bound, point.rows);
      if (best && !point.lower_bound) point.lower_bound_status = "optimal's own";
      if (best && best != point.lower_bound) point.lower_bound_source = "optimal's solver";
      point.lower_bound = best;
    }
    SettleSolverStatus(point.rows, point.lower_bound, settings.relative_gap);
    points.push_back(std::move(point));
  }
  return points;
}

}  // namespace remat
