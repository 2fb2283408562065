// One graph, one budget: reference, bound, strategies and gaps.
#include "planning/plan_report.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/cancellation.h"
#include "planning/time_left.h"
#include "strategies/checkpoint_all.h"

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

RowVerdict VerdictOf(const StrategyRow& row, const std::optional<double>& bound,
                     double relative_gap) {
  if (!row.result) return RowVerdict::kNoSchedule;
  if (!row.fits()) return RowVerdict::kOverBudget;
  // The test optimal itself uses (GapClosed): the cost is within the relative gap of the bound.
  const double cost = row.result->cost;
  const bool proven = bound && cost - *bound <= relative_gap * std::max(1.0, std::fabs(cost));
  return proven ? RowVerdict::kOptimal : RowVerdict::kFeasible;
}

const char* RowVerdictName(RowVerdict verdict) {
  switch (verdict) {
    case RowVerdict::kOptimal: return "optimal";
    case RowVerdict::kFeasible: return "feasible";
    case RowVerdict::kOverBudget: return "over budget";
    case RowVerdict::kNoSchedule: return "no schedule";
  }
  return "?";
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
                             const NoRematReference& no_remat, const PlanRequest& request) {
  PlanReport report;
  report.budget = budget;
  report.no_remat = no_remat;
  report.min_peak_bytes = MinimumPeakLowerBound(graph);
  const SolverSettings& settings = request.settings;
  const TimeLeft left(request.total_time_limit_s);
  if (request.lower_bound) {
    // Half of a total limit at most: a tighter bound is worth less than the strategies' time.
    report.bound = BestLowerBound(graph, budget.activation_bytes,
                                  {.time_limit_s = left.Cap(settings.time_limit_s, 0.5),
                                   .threads = settings.threads,
                                   .verbose = settings.verbose});
  }
  report.relative_gap = settings.relative_gap;
  SharedWork shared;  // the roundings solve their LP once; optimal reuses the bound
  shared.lower_bound = report.lower_bound();
  report.rows.resize(request.strategies.size());
  for (const size_t i : RunOrder(request.strategies)) {
    const std::string& name = request.strategies[i];
    if (CancelRequested()) break;  // the caller discards a cancelled report
    if (left.Spent()) {
      report.rows[i] = {.strategy = name, .solver_status = "skipped",
                        .note = "skipped: the total time limit is spent"};
      continue;
    }
    SolverSettings capped = settings;
    capped.time_limit_s = left.Cap(settings.time_limit_s, 1.0);
    report.rows[i] = RunStrategy(name, graph, budget.activation_bytes, capped, &shared);
  }
  RaiseToSolverBound(report);
  return report;
}

}  // namespace

PlanReport PlanAtBudget(const Graph& graph, const Budget& budget, const PlanRequest& request) {
  return PlanWithReference(graph, budget, NoRemat(graph), request);
}

PlanReport PlanAtBudget(const Graph& graph, const BudgetRequest& budget,
                        const PlanRequest& request) {
  const NoRematReference no_remat = NoRemat(graph);
  return PlanWithReference(graph, ResolveBudget(budget, no_remat.peak_bytes), no_remat, request);
}

}  // namespace remat
