// One graph, one budget: reference, bound, strategies and gaps.
#include "planning/plan_report.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/errors.h"
#include "planning/budget_point.h"
#include "planning/time_left.h"
#include "strategies/checkpoint_all.h"
#include "strategies/eviction.h"

namespace remat {

NoRematReference NoRemat(const Graph& graph) {
  const StrategyResult all = CheckpointAll(graph, std::numeric_limits<int64_t>::max());
  return {.cost = all.cost, .peak_bytes = all.peak_bytes};
}

std::optional<double> GapToBound(const StrategyRow& row, const std::optional<double>& bound) {
  if (!row.fits() || !bound) return std::nullopt;
  const double gap = RelativeGap(row.result->cost, *bound);
  if (std::isnan(gap)) return std::nullopt;
  return gap;
}

std::optional<double> BestOfBounds(const std::optional<double>& bound,
                                   const std::vector<StrategyRow>& rows) {
  std::optional<double> best = bound;
  for (const StrategyRow& row : rows) {
    if (row.own_bound && *row.own_bound > 0 && (!best || *row.own_bound > *best)) {
      best = row.own_bound;
    }
  }
  return best;
}

std::optional<int64_t> PlanReport::SmallestPeakFound() const {
  std::optional<int64_t> smallest;
  for (const StrategyRow& row : rows) {
    if (row.result && (!smallest || row.result->peak_bytes < *smallest)) {
      smallest = row.result->peak_bytes;
    }
  }
  return smallest;
}

std::optional<double> PlanReport::lower_bound() const {
  if (!bound || bound->status == SolveStatus::kInfeasible) return std::nullopt;
  return bound->cost;
}

std::optional<double> PlanReport::Gap(const StrategyRow& row) const {
  return GapToBound(row, lower_bound());
}

bool PlanReport::any_fits() const {
  return std::any_of(rows.begin(), rows.end(), [](const StrategyRow& r) { return r.fits(); });
}

const StrategyRow* PlanReport::Best() const {
  const StrategyRow* best = nullptr;
  for (const StrategyRow& row : rows) {
    if (row.fits() && (best == nullptr || row.result->cost < best->result->cost)) best = &row;
  }
  return best;
}

namespace {

// The most seconds spent making a known schedule over the budget fit (PlanWithReference).
constexpr double kStartEvictionS = 10.0;

// When optimal proved a bound above the best bound (or none was asked for), the report's bound
// becomes optimal's, so that the header and every row's gap use the one best bound.
void RaiseToSolverBound(PlanReport& report) {
  if (report.bound && report.bound->status == SolveStatus::kInfeasible) return;
  const std::optional<double> best = BestOfBounds(report.lower_bound(), report.rows);
  if (!best || best == report.lower_bound()) return;
  const std::string before =
      report.bound ? fmt::format("above {} {:.6g}; {}", report.bound->source, report.bound->cost,
                                 report.bound->note)
                   : std::string("the only bound: none other was asked for");
  const double seconds = report.bound ? report.bound->seconds : 0;
  report.bound = BestBound{.status = SolveStatus::kOptimal, .cost = *best,
                           .source = "optimal's solver", .note = before, .seconds = seconds};
}

PlanReport PlanWithReference(const Graph& graph, const Budget& budget,
                             const NoRematReference& no_remat, const PlanRequest& request,
                             const std::optional<StrategyResult>& known = std::nullopt) {
  PlanReport report;
  report.budget = budget;
  report.no_remat = no_remat;
  report.min_peak_bytes = MinimumPeakLowerBound(graph);
  const TimeLeft left(request.total_time_limit_s);
  report.relative_gap = request.settings.relative_gap;
  std::optional<StrategyResult> best = known;
  for (const auto& [name, schedule] : request.starts) {
    StrategyResult start =
        EvaluateSchedule(graph, name, schedule, budget.activation_bytes, "a known schedule");
    if (start.status != FitStatus::kFits) {
      // Over the budget: made to fit by evicting from its holds, in at most a tenth of the
      // time (torch's partition at its budget knob can be cheaper than anything evicted from
      // keeping everything: the GRU of docs/BENCHMARKS.md at 70%).
      StrategyResult evicted = EvictFrom(graph, budget.activation_bytes, schedule,
                                         {.time_limit_s = left.Cap(kStartEvictionS, 0.1)});
      if (evicted.status == FitStatus::kFits) {
        start = std::move(evicted);
        start.parameters = fmt::format("{}, evicted from {}", start.parameters, name);
        start.strategy = name;
      }
    }
    if (start.status == FitStatus::kFits && (!best || IsBetter(start, *best))) {
      best = std::move(start);
    }
  }
  // Half of a total limit at most for the bound: a tighter bound is worth less than the
  // strategies' time.
  BudgetPointResult point = PlanOneBudget(
      graph, budget.activation_bytes,
      {.strategies = request.strategies, .settings = request.settings,
       .lower_bound = request.lower_bound, .bound_share = 0.5, .known = best},
      left);
  report.bound = std::move(point.bound);
  report.rows = std::move(point.rows);
  RaiseToSolverBound(report);
  SettleSolverStatus(report.rows, report.lower_bound(), report.relative_gap);
  return report;
}

}  // namespace

PlanReport PlanAtBudget(const Graph& graph, const Budget& budget, const PlanRequest& request) {
  return PlanWithReference(graph, budget, NoRemat(graph), request);
}

bool IsMinBudget(const std::string& budget_text) { return budget_text == "min"; }

PlanReport PlanAtBudget(const Graph& graph, const BudgetRequest& budget,
                        const PlanRequest& request) {
  const NoRematReference no_remat = NoRemat(graph);
  if (!IsMinBudget(budget.budget_text)) {
    return PlanWithReference(graph, ResolveBudget(budget, no_remat.peak_bytes), no_remat, request);
  }
  if (!budget.memory_text.empty()) {
    throw UsageError(fmt::format("give either {} or {}, not both", budget.names.budget,
                                 budget.names.memory));
  }
  const TimeLeft left(request.total_time_limit_s);
  MinBudget smallest = FindMinimumBudget(
      graph, {.time_limit_s = left.Cap(request.settings.time_limit_s, 0.5),
              .threads = request.settings.threads});
  PlanRequest rest = request;
  if (request.total_time_limit_s > 0) rest.total_time_limit_s = std::max(1e-3, left.Left());
  PlanReport report = PlanWithReference(graph, Budget{.activation_bytes = smallest.peak_bytes},
                                        no_remat, rest, smallest.schedule);
  // A strategy that planned at the smallest budget may have found a schedule peaking lower.
  for (const StrategyRow& row : report.rows) {
    if (row.fits() && row.result->peak_bytes < smallest.peak_bytes) {
      smallest.peak_bytes = row.result->peak_bytes;
      smallest.schedule = *row.result;
      smallest.found_by = fmt::format("{} at the budget of {} B", row.strategy,
                                      report.budget.activation_bytes);
    }
  }
  smallest.lower_bound_bytes = std::min(smallest.lower_bound_bytes, smallest.peak_bytes);
  // One figure for "no schedule peaks below": the search's bound is at least the report's.
  report.min_peak_bytes = std::max(report.min_peak_bytes, smallest.lower_bound_bytes);
  report.min_budget = std::move(smallest);
  return report;
}

}  // namespace remat
