// One graph, one budget: reference, bound, strategies and gaps.
#include "planning/plan_report.h"

#include <algorithm>
#include <chrono>
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

// Seconds left of a total limit measured from construction; unlimited when the total is 0.
class TimeLeft {
 public:
  explicit TimeLeft(double total_s) : total_s_(total_s) {}
  double Left() const {
    if (total_s_ <= 0) return std::numeric_limits<double>::infinity();
    return total_s_ - std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
  }
  bool Spent() const { return Left() <= 0; }
  // A run's limit: `limit_s`, at most `share` of what is left (never below a millisecond,
  // the smallest limit a solver takes).
  double Cap(double limit_s, double share) const {
    return std::max(1e-3, std::min(limit_s, share * Left()));
  }

 private:
  double total_s_;
  std::chrono::steady_clock::time_point begin_ = std::chrono::steady_clock::now();
};

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
  SharedWork shared;  // the roundings solve their LP once; optimal reuses the bound
  shared.lower_bound = report.lower_bound();
  for (const std::string& name : request.strategies) {
    if (CancelRequested()) break;  // the caller discards a cancelled report
    if (left.Spent()) {
      report.rows.push_back({.strategy = name, .solver_status = "skipped",
                             .note = "skipped: the total time limit is spent"});
      continue;
    }
    SolverSettings capped = settings;
    capped.time_limit_s = left.Cap(settings.time_limit_s, 1.0);
    report.rows.push_back(RunStrategy(name, graph, budget.activation_bytes, capped, &shared));
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
