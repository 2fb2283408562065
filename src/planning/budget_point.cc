// The strategies and the bound at one budget, in the order that lets the bound stop early.
#include "planning/budget_point.h"

#include <algorithm>
#include <limits>

#include "core/cancellation.h"
#include "strategies/best_heuristic.h"

namespace remat {

BudgetPointResult PlanOneBudget(const Graph& graph, int64_t budget_bytes,
                                const BudgetPointRequest& request, const TimeLeft& total) {
  const SolverSettings& settings = request.settings;
  const std::vector<std::string>& names = request.strategies;
  BudgetPointResult result;
  result.rows.resize(names.size());
  SharedWork shared;  // the roundings solve their LP once; optimal reuses the bound
  shared.best = request.known;
  shared.known = request.known;
  auto step = [&](const std::string& what) {
    if (request.progress != nullptr) {
      request.progress->Start(request.where.empty() ? what : what + " " + request.where);
    }
  };
  auto done = [&] {
    if (request.progress != nullptr) request.progress->Finish();
  };
  // Time spent on optimal's behalf before it runs: its start (when computed for the bound) is
  // part of its time limit, and with the bound part of what its patience grows with.
  double start_s = 0, bound_s = 0;
  auto run = [&](size_t i) {
    const std::string& name = names[i];
    step(name);
    if (total.Spent()) {
      result.rows[i] = {.strategy = name, .solver_status = "skipped", .note = request.spent_note};
    } else {
      SolverSettings capped = settings;
      capped.time_limit_s = total.Cap(settings.time_limit_s, 1.0);
      if (name == "optimal") {
        capped.time_limit_s = std::max(1e-3, capped.time_limit_s - start_s);
        capped.time_before_s = start_s + bound_s;
      }
      result.rows[i] = RunStrategy(name, graph, budget_bytes, capped, &shared);
    }
    done();
  };
  const std::vector<size_t> order = RunOrder(names);
  size_t next = 0;
  for (; next < order.size() && names[order[next]] != "optimal"; ++next) {
    if (CancelRequested()) return result;  // the caller discards a cancelled result
    run(order[next]);
  }
  const bool optimal_asked = next < order.size();
  if (request.lower_bound) {
    if (optimal_asked && !shared.heuristic && !total.Spent() && !CancelRequested()) {
      // Optimal's start, computed now so that the bound knows the cost it must prove.
      const TimeLeft timer(0);
      try {
        shared.heuristic = BestHeuristic(
            graph, budget_bytes,
            {.time_limit_s = total.Cap(std::min(30.0, settings.time_limit_s / 4), 1.0),
             .evicted = shared.evicted, .known = shared.known});
        if (!shared.best || IsBetter(*shared.heuristic, *shared.best)) {
          shared.best = shared.heuristic;
        }
      } catch (const TimeLimitReached&) {
        // No start in its share of the time: optimal computes its own.
      }
      start_s = timer.Elapsed();
    }
    step("lower bound");
    if (total.Spent() || CancelRequested()) {
      result.bound_skipped = true;
    } else {
      const bool has_fit = shared.best && shared.best->status == FitStatus::kFits;
      result.bound = BestLowerBound(
          graph, budget_bytes,
          {.time_limit_s = total.Cap(settings.time_limit_s, request.bound_share),
           .threads = settings.threads,
           .verbose = settings.verbose,
           .target_cost = has_fit ? BoundNeededFor(shared.best->cost, settings.relative_gap)
                                  : std::numeric_limits<double>::infinity()});
      if (result.bound->status != SolveStatus::kInfeasible) {
        shared.lower_bound = result.bound->cost;
      }
      bound_s = result.bound->seconds;
    }
    done();
  }
  for (; next < order.size(); ++next) {
    if (CancelRequested()) return result;
    run(order[next]);
  }
  return result;
}

}  // namespace remat
