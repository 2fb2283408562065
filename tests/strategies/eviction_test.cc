// The eviction heuristic: its stage memory model agrees with the simulator, it never recomputes
// when everything fits, and its schedules are valid on any DAG.
#include "strategies/eviction.h"

#include <gtest/gtest.h>

#include <limits>

#include "core/recompute.h"
#include "core/schedule.h"
#include "core/simulator.h"
#include "strategies/checkpoint_all.h"
#include "testing/random_graphs.h"

namespace remat {
namespace {

std::vector<Graph> RandomGraphs(uint32_t seeds = 100) {
  std::vector<Graph> graphs;
  for (uint32_t seed = 0; seed < seeds; ++seed) {
    graphs.push_back(testing::RandomTrainingGraph(seed, 2 + static_cast<int32_t>(seed % 25)));
    graphs.push_back(testing::RandomUnlabeledDag(seed, 3 + static_cast<int32_t>(seed % 30),
                                                 0.1 + 0.05 * (seed % 6)));
  }
  return graphs;
}

// Every pass returns a valid schedule whose reported cost, peak and status are the
// simulator's. 100 graphs x 4 budgets x 4 rules x 2 depths.
TEST(EvictionTest, EveryPassIsValidAndSimulated) {
  int32_t fitting = 0;
  for (const Graph& g : RandomGraphs(50)) {
    const int64_t peak = CheckpointAll(g, std::numeric_limits<int64_t>::max()).peak_bytes;
    const int64_t floor = MinimumPeakLowerBound(g);
    for (double f : {0.0, 0.3, 0.6, 0.9}) {
      const auto budget = floor + static_cast<int64_t>(f * static_cast<double>(peak - floor));
      for (EvictionScore score : AllEvictionScores()) {
        for (int32_t depth : {0, 2}) {
          SCOPED_TRACE(::testing::Message() << g.name() << " budget " << budget << " rule "
                                            << EvictionScoreName(score) << " depth " << depth);
          const StrategyResult r = EvictOnce(g, budget, score, depth);
          ASSERT_TRUE(CheckSchedule(g, r.schedule).empty());
          const SimulationResult sim = Simulate(g, r.schedule);
          EXPECT_EQ(sim.peak_bytes, r.peak_bytes);
          EXPECT_DOUBLE_EQ(sim.cost, r.cost);
          EXPECT_EQ(r.status == FitStatus::kFits, r.peak_bytes <= budget);
          if (r.status == FitStatus::kFits) ++fitting;
        }
      }
    }
  }
  EXPECT_GT(fitting, 1600);  // most of the 3200 passes fit: it does its job on small graphs
}

// With room for everything nothing is evicted: the no-rematerialization cost.
TEST(EvictionTest, NoRecomputationAtTheNoRematPeak) {
  for (const Graph& g : RandomGraphs()) {
    const StrategyResult all = CheckpointAll(g, std::numeric_limits<int64_t>::max());
    const StrategyResult r = Evict(g, all.peak_bytes);
    EXPECT_EQ(r.status, FitStatus::kFits) << g.name();
    EXPECT_DOUBLE_EQ(r.cost, g.total_cost()) << g.name();
  }
}

// A chain a -> b -> c -> d where d also reads a. Bytes 4, 8, 4, 4; budget 16. Holding a
// through stages 1..3 costs 4 B everywhere; at stage 2 (computing c) a, b and c are live:
// 4 + 8 + 4 = 16 fits; at stage 3 a, c, d: 12. So no value needs recomputing.
TEST(EvictionTest, HandCheckedChainWithSkip) {
  std::vector<Node> nodes = {{.name = "a", .cost = 1, .bytes = 4}, {.name = "b", .cost = 1, .bytes = 8},
                             {.name = "c", .cost = 1, .bytes = 4}, {.name = "d", .cost = 1, .bytes = 4}};
  const Graph g(nodes, {{0, 1}, {1, 2}, {2, 3}, {0, 3}});
  const StrategyResult fits = Evict(g, 16);
  EXPECT_EQ(fits.status, FitStatus::kFits);
  EXPECT_DOUBLE_EQ(fits.cost, 4);
  // At 12 B, stage 2 cannot hold a (4 + 8 + 4 = 16 > 12): a is dropped and recomputed in
  // stage 3, where a, c and d are live (12 B): one extra evaluation.
  const StrategyResult tight = Evict(g, 12);
  EXPECT_EQ(tight.status, FitStatus::kFits);
  EXPECT_DOUBLE_EQ(tight.cost, 5);
  EXPECT_EQ(tight.peak_bytes, 12);
}

// From the schedule that keeps everything, EvictFrom is Evict: the uses it starts from are the
// same (each value's own stage and its readers').
TEST(EvictionTest, EvictingFromKeepingEverythingIsEvict) {
  for (const Graph& g : RandomGraphs(30)) {
    const StrategyResult all = CheckpointAll(g, std::numeric_limits<int64_t>::max());
    const int64_t floor = MinimumPeakLowerBound(g);
    for (double f : {0.2, 0.6}) {
      const auto budget =
          floor + static_cast<int64_t>(f * static_cast<double>(all.peak_bytes - floor));
      SCOPED_TRACE(::testing::Message() << g.name() << " budget " << budget);
      const StrategyResult from = EvictFrom(g, budget, all.schedule);
      const StrategyResult plain = Evict(g, budget);
      EXPECT_EQ(from.schedule, plain.schedule);
      EXPECT_DOUBLE_EQ(from.cost, plain.cost);
    }
  }
}

// From a schedule that already recomputes (evict's at a loose budget), evicting to a tighter
// budget gives a valid, simulated schedule whose peak is never above the start's.
TEST(EvictionTest, EvictingFromAScheduleThatRecomputesIsValidAndNeverPeaksHigher) {
  int32_t fitting = 0, asked = 0;
  for (const Graph& g : RandomGraphs(50)) {
    const int64_t peak = CheckpointAll(g, std::numeric_limits<int64_t>::max()).peak_bytes;
    const int64_t floor = MinimumPeakLowerBound(g);
    const auto at = [&](double f) {
      return floor + static_cast<int64_t>(f * static_cast<double>(peak - floor));
    };
    const StrategyResult start = Evict(g, at(0.7));
    for (double f : {0.0, 0.3}) {
      SCOPED_TRACE(::testing::Message() << g.name() << " budget " << at(f));
      const StrategyResult r = EvictFrom(g, at(f), start.schedule);
      ASSERT_TRUE(CheckSchedule(g, r.schedule).empty());
      const SimulationResult sim = Simulate(g, r.schedule);
      EXPECT_EQ(sim.peak_bytes, r.peak_bytes);
      EXPECT_DOUBLE_EQ(sim.cost, r.cost);
      EXPECT_EQ(r.status == FitStatus::kFits, r.peak_bytes <= at(f));
      EXPECT_LE(r.peak_bytes, start.peak_bytes);
      fitting += r.status == FitStatus::kFits;
      ++asked;
    }
  }
  EXPECT_GT(fitting, asked / 2);  // it does its job from a start that recomputes, too
}

}  // namespace
}  // namespace remat
