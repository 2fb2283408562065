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
  for (const StrategySpec& spec : BaselineStrategies()) {
    if (!spec.applies(graph)) continue;
    // The baselines take milliseconds up to large graphs; past half the limit (a 100,000-node
    // chain) the rest are skipped so that the answer comes on time.
    if (best && (elapsed() > options.time_limit_s / 2 || CancelRequested())) break;
    consider(spec.run(graph, budget_bytes));
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
