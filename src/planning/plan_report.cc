// One graph, one budget: reference, bound, strategies and gaps.
#include "planning/plan_report.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/cancellation.h"
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

PlanReport PlanWithReference(const Graph& graph, const Budget& budget,
                             const NoRematReference& no_remat, const PlanRequest& request) {
  PlanReport report;
  report.budget = budget;
  report.no_remat = no_remat;
  report.min_peak_bytes = MinimumPeakLowerBound(graph);
  const SolverSettings& settings = request.settings;
  if (request.lower_bound) {
    report.bound = BestLowerBound(graph, budget.activation_bytes,
                                  {.time_limit_s = settings.time_limit_s,
                                   .threads = settings.threads,
                                   .verbose = settings.verbose});
  }
  SharedWork shared;  // the roundings solve their LP once; optimal reuses the bound
  shared.lower_bound = report.lower_bound();
  for (const std::string& name : request.strategies) {
    if (CancelRequested()) break;  // the caller discards a cancelled report
    report.rows.push_back(RunStrategy(name, graph, budget.activation_bytes, settings, &shared));
  }
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
