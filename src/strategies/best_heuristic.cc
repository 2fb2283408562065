// Baselines, the cheapest one over the budget repaired, and eviction, then local search on the
// winner, within one time limit.
#include "strategies/best_heuristic.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "core/cancellation.h"
#include "strategies/eviction.h"
#include "strategies/local_search.h"
#include "strategies/registry.h"

namespace remat {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point begin) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

}  // namespace

StrategyResult BestHeuristic(const Graph& graph, int64_t budget_bytes,
                             const BestHeuristicOptions& options) {
  // Every part keeps this deadline (core/cancellation.h), and its own share of it below.
  const DeadlineScope deadline(options.time_limit_s);
  std::optional<StrategyResult> best;
  auto consider = [&](StrategyResult result) {
    if (!best || IsBetter(result, *best)) best = std::move(result);
  };
  // The baselines over the budget: the nearest to it among those cheaper than every fitting
  // one is repaired below.
  std::vector<StrategyResult> over;
  // The baselines get half of the time. They run last registered first: the module
  // baselines fitted to the budget, instant and the strongest on transformers, come before
  // Griewank's and Chen's sweeps, which a short limit (what a compiled region leaves after
  // torch's partitions) used to spend before reaching them. On a tie the first registered
  // wins, as in registry order. A baseline is started only when the time left is at least
  // what the slowest one so far took (each builds and simulates at least one schedule of the
  // whole graph: seconds on a million nodes); one still running at the deadline is abandoned.
  {
    const DeadlineScope baselines(SecondsLeft() / 2);
    double slowest_s = 0;
    const std::vector<StrategySpec>& specs = BaselineStrategies();
    for (auto spec = specs.rbegin(); spec != specs.rend(); ++spec) {
      if (!spec->applies(graph)) continue;
      if (best && (DeadlinePassed() || SecondsLeft() < slowest_s)) break;
      const auto begin = std::chrono::steady_clock::now();
      try {
        StrategyResult result = spec->run(graph, budget_bytes);
        if (result.status != FitStatus::kFits) over.push_back(result);
        if (!best || !IsBetter(*best, result)) best = std::move(result);
      } catch (const TimeLimitReached&) {
        break;
      }
      slowest_s = std::max(slowest_s, SecondsSince(begin));
    }
  }
  if (options.known) consider(*options.known);
  // A baseline a little over the budget can be far cheaper than anything that fits (block
  // checkpointing on a long sequence, a few hundred MB over): the one of least peak among
  // those cheaper than every fitting schedule is made to fit by evicting from its holds, in up
  // to a third of what is left, before eviction from keeping everything.
  const StrategyResult* nearest = nullptr;
  for (const StrategyResult& result : over) {
    if (best->status == FitStatus::kFits && result.cost >= best->cost) continue;
    if (!nearest || result.peak_bytes < nearest->peak_bytes) nearest = &result;
  }
  if (nearest) {
    try {
      const DeadlineScope repair(SecondsLeft() / 3);
      StrategyResult repaired = EvictFrom(graph, budget_bytes, nearest->schedule,
                                          {.time_limit_s = SecondsLeft()});
      repaired.parameters =
          fmt::format("{}, evicted from {}", repaired.parameters, nearest->strategy);
      consider(std::move(repaired));
    } catch (const TimeLimitReached&) {
      // No pass ended in its share: the baselines stand.
    }
  }
  // Eviction gets up to three quarters of what is left; local search the rest. Without a
  // schedule yet, a deadline reached in eviction ends the call (RunStrategy reports it).
  if (options.evicted) {
    consider(*options.evicted);
  } else {
    try {
      const DeadlineScope eviction(SecondsLeft() * 0.75);
      consider(Evict(graph, budget_bytes, {.time_limit_s = SecondsLeft()}));
    } catch (const TimeLimitReached&) {
      if (!best) throw;
    }
  }
  if (!best) throw TimeLimitReached();
  StrategyResult result = std::move(*best);
  result.parameters = fmt::format("from {} ({})", result.strategy, result.parameters);
  result.strategy = "local-search";
  return ImproveSchedule(graph, budget_bytes, std::move(result),
                         {.time_limit_s = SecondsLeft()});
}

}  // namespace remat
