// Baselines and eviction, then local search on the winner, within one time limit.
#include "strategies/best_heuristic.h"

#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "core/cancellation.h"
#include "strategies/eviction.h"
#include "strategies/local_search.h"
#include "strategies/registry.h"

namespace remat {

StrategyResult BestHeuristic(const Graph& graph, int64_t budget_bytes,
                             const BestHeuristicOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::optional<StrategyResult> best;
  auto consider = [&](StrategyResult result) {
    if (!best || IsBetter(result, *best)) best = std::move(result);
  };
  // The baselines take milliseconds up to large graphs; past half the limit (a 100,000-node
  // chain) the rest are skipped so that the answer comes on time. They run last registered
  // first: the module baselines fitted to the budget, instant and the strongest on
  // transformers, come before Griewank's and Chen's sweeps, which a short limit (what a
  // compiled region leaves after torch's partitions) used to spend before reaching them. On a
  // tie the first registered wins, as in registry order.
  const std::vector<StrategySpec>& baselines = BaselineStrategies();
  for (auto spec = baselines.rbegin(); spec != baselines.rend(); ++spec) {
    if (!spec->applies(graph)) continue;
    if (best && (elapsed() > options.time_limit_s / 2 || CancelRequested())) break;
    StrategyResult result = spec->run(graph, budget_bytes);
    if (!best || !IsBetter(*best, result)) best = std::move(result);
  }
  if (options.known) consider(*options.known);
  // Eviction gets up to three quarters of what is left; local search the rest.
  consider(options.evicted ? *options.evicted
                           : Evict(graph, budget_bytes,
                                   {.time_limit_s = (options.time_limit_s - elapsed()) * 0.75}));
  StrategyResult result = std::move(*best);
  result.parameters = fmt::format("from {} ({})", result.strategy, result.parameters);
  result.strategy = "local-search";
  return ImproveSchedule(graph, budget_bytes, std::move(result),
                         {.time_limit_s = options.time_limit_s - elapsed()});
}

}  // namespace remat
