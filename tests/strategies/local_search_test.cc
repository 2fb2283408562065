// Local search: never dearer than its start, always within the budget, and it removes a
// recomputation when holding the value fits.
#include "strategies/local_search.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <vector>

#include "core/recompute.h"
#include "core/simulator.h"
#include "strategies/best_heuristic.h"
#include "strategies/checkpoint_all.h"
#include "strategies/checkpoints.h"
#include "strategies/eviction.h"
#include "strategies/registry.h"
#include "testing/random_graphs.h"

namespace remat {
namespace {

// A chain a -> b -> c -> d with d also reading a; 4 B each, unit costs. Start: a is held into
// stage 1 but not into stages 2 and 3, so stage 3 recomputes it (cost 5). At 12 B holding a fits (stage 2:
// a, b, c = 12 B; stage 3: a, c, d = 12 B), so the search must find cost 4.
TEST(LocalSearchTest, HoldsARecomputedValueWhenItFits) {
  std::vector<Node> nodes(4);
  for (int32_t i = 0; i < 4; ++i) nodes[i] = {.name = std::string(1, 'a' + i), .cost = 1, .bytes = 4};
  const Graph g(nodes, {{0, 1}, {1, 2}, {2, 3}, {0, 3}});
  StageMatrix S(4, 4);
  S.Set(1, 0);  // a held into stage 1 only
  S.Set(2, 1);  // b held into stage 2
  S.Set(3, 2);  // c held into stage 3
  const StrategyResult start = EvaluateSchedule(g, "start", ScheduleFromCheckpoints(g, S), 12, "");
  ASSERT_EQ(start.status, FitStatus::kFits);
  ASSERT_DOUBLE_EQ(start.cost, 5);
  const StrategyResult better = ImproveSchedule(g, 12, start);
  EXPECT_DOUBLE_EQ(better.cost, 4);
  EXPECT_LE(better.peak_bytes, 12);
  // At 8 B nothing can hold a next to two other values: the start is returned unchanged.
  const StrategyResult tight = EvaluateSchedule(g, "start", ScheduleFromCheckpoints(g, S), 8, "");
  EXPECT_DOUBLE_EQ(ImproveSchedule(g, 8, tight).cost, tight.cost);
}

// Sources v (cost 10, 4 B), x and y (cost 1, 2 B each), m (8 B) read by n (1 B), and r reading
// v, x, y and n; unit costs but v's. At 13 B, stage 4 (m and n, 9 B) has room for 4 B held:
// the start holds x and y and recomputes v for r (cost 15 + 10). Holding v overflows stage 4 by
// 4 B, more than either x or y frees alone: only giving up both (recomputed for 2) makes room.
// The optimum, 17: v is held (else +10), then m, n and v fill stage 4 and x, y come back.
TEST(LocalSearchTest, GivesUpSeveralSmallHoldsForALargerOne) {
  const std::vector<Node> nodes = {
      {.name = "v", .cost = 10, .bytes = 4}, {.name = "x", .cost = 1, .bytes = 2},
      {.name = "y", .cost = 1, .bytes = 2},  {.name = "m", .cost = 1, .bytes = 8},
      {.name = "n", .cost = 1, .bytes = 1},  {.name = "r", .cost = 1, .bytes = 1}};
  const Graph g(nodes, {{3, 4}, {0, 5}, {1, 5}, {2, 5}, {4, 5}});
  StageMatrix S(6, 6);
  S.SetRun(1, 2, 5);  // x held from its stage to r's
  S.SetRun(2, 3, 5);  // y too
  S.Set(4, 3);        // m into n's stage
  S.Set(5, 4);        // n into r's stage
  const StrategyResult start = EvaluateSchedule(g, "start", ScheduleFromCheckpoints(g, S), 13, "");
  ASSERT_EQ(start.status, FitStatus::kFits);
  ASSERT_DOUBLE_EQ(start.cost, 25);
  const StrategyResult better = ImproveSchedule(g, 13, start);
  EXPECT_DOUBLE_EQ(better.cost, 17);
  EXPECT_LE(better.peak_bytes, 13);
  EXPECT_EQ(Simulate(g, better.schedule).peak_bytes, better.peak_bytes);
}

// On 100 random graphs at a middle budget: the improved schedule is valid, fits, is never
// dearer than the best baseline that fits, and the reported figures are the simulator's.
TEST(LocalSearchTest, NeverWorseThanItsStartAndAlwaysFits) {
  int32_t improved = 0;
  for (uint32_t seed = 0; seed < 100; ++seed) {
    const Graph g = seed % 2 == 0 ? testing::RandomTrainingGraph(seed, 3 + static_cast<int32_t>(seed % 20))
                                  : testing::RandomUnlabeledDag(seed, 5 + static_cast<int32_t>(seed % 25), 0.2);
    const int64_t peak = CheckpointAll(g, std::numeric_limits<int64_t>::max()).peak_bytes;
    const int64_t budget = (MinimumPeakLowerBound(g) + peak) / 2;
    const StrategyResult best = BestHeuristic(g, budget, {.time_limit_s = 5});
    SCOPED_TRACE(g.name());
    if (best.status != FitStatus::kFits) continue;
    EXPECT_LE(best.peak_bytes, budget);
    const SimulationResult sim = Simulate(g, best.schedule);
    EXPECT_DOUBLE_EQ(sim.cost, best.cost);
    EXPECT_EQ(sim.peak_bytes, best.peak_bytes);
    for (const StrategySpec& spec : BaselineStrategies()) {
      if (!spec.applies(g)) continue;
      const StrategyResult r = spec.run(g, budget);
      if (r.status == FitStatus::kFits) {
        EXPECT_LE(best.cost, r.cost + 1e-9) << spec.name;
        if (best.cost < r.cost - 1e-9) ++improved;
      }
    }
  }
  EXPECT_GT(improved, 0);  // the heuristics beat some baseline somewhere
}

// A baseline over the budget but cheaper than every fitting one is repaired by eviction from
// its holds: where that repair fits, so does the heuristics' answer, never dearer; somewhere
// the repair beats both every fitting baseline and eviction from keeping everything.
TEST(LocalSearchTest, RepairsTheNearestCheaperBaselineOverTheBudget) {
  int repair_wins = 0;
  for (uint32_t seed = 0; seed < 60; ++seed) {
    const Graph g = testing::WithModuleStructure(
        testing::RandomTrainingGraph(seed, 8 + static_cast<int32_t>(seed % 24)),
        2 + static_cast<int32_t>(seed % 4));
    const int64_t peak = CheckpointAll(g, std::numeric_limits<int64_t>::max()).peak_bytes;
    const int64_t floor = MinimumPeakLowerBound(g);
    for (const double at : {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}) {
      const auto budget = static_cast<int64_t>(floor + at * static_cast<double>(peak - floor));
      SCOPED_TRACE(::testing::Message() << g.name() << " at " << budget << " B");
      std::optional<StrategyResult> fitting;
      std::vector<StrategyResult> over;
      for (const StrategySpec& spec : BaselineStrategies()) {
        if (!spec.applies(g)) continue;
        StrategyResult r = spec.run(g, budget);
        if (r.status != FitStatus::kFits) {
          over.push_back(std::move(r));
        } else if (!fitting || r.cost < fitting->cost) {
          fitting = std::move(r);
        }
      }
      const StrategyResult* nearest = nullptr;
      for (const StrategyResult& r : over) {
        if (fitting && r.cost >= fitting->cost) continue;
        if (!nearest || r.peak_bytes < nearest->peak_bytes) nearest = &r;
      }
      if (!nearest) continue;
      const StrategyResult repaired = EvictFrom(g, budget, nearest->schedule);
      if (repaired.status != FitStatus::kFits) continue;
      const StrategyResult best = BestHeuristic(g, budget, {.time_limit_s = 30});
      ASSERT_EQ(best.status, FitStatus::kFits);
      EXPECT_LE(best.cost, repaired.cost + 1e-9);
      const StrategyResult evicted = Evict(g, budget);
      if (repaired.cost < evicted.cost - 1e-9 &&
          (!fitting || repaired.cost < fitting->cost - 1e-9)) {
        ++repair_wins;
      }
    }
  }
  EXPECT_GT(repair_wins, 0);
}

}  // namespace
}  // namespace remat
