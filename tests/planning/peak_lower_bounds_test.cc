// The peak lower bounds: hand-checked values, validity against the least peak of every schedule
// of tiny graphs (brute force over all checkpoint matrices) and against the schedules the
// heuristics find on larger graphs, and the game's depth behaving as the proof says.
#include "planning/peak_lower_bounds.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "core/recompute.h"
#include "core/simulator.h"
#include "planning/min_budget.h"
#include "solvers/brute_force.h"
#include "strategies/eviction.h"
#include "strategies/registry.h"
#include "testing/random_graphs.h"
#include "zoo/random_layered.h"

namespace remat {
namespace {

// v reads a and b (1 B each); a <- a1 <- a2 and b <- b1 <- b2, with a1, b1 1 B and a2, b2 10 B.
// Whichever branch runs second, its 10-byte source and its 1-byte middle are live beside the
// first branch's result: 1 + 10 + 1 = 12 B (a2, a1, a, b2, b1, b, v, freeing as it goes).
// A node and its inputs say 11 B (b2 and b1); the last input of v says 3 B; the game needs three
// steps (b last, then b1, then b2 beside a) to see the 12 B.
TEST(PeakLowerBoundsTest, HandCheckedGameDepth) {
  std::vector<Node> nodes = {{.name = "a2", .cost = 1, .bytes = 10}, {.name = "a1", .cost = 1, .bytes = 1},
                             {.name = "a", .cost = 1, .bytes = 1},   {.name = "b2", .cost = 1, .bytes = 10},
                             {.name = "b1", .cost = 1, .bytes = 1},  {.name = "b", .cost = 1, .bytes = 1},
                             {.name = "v", .cost = 1, .bytes = 1}};
  const Graph g(nodes, {{0, 1}, {1, 2}, {3, 4}, {4, 5}, {2, 6}, {5, 6}});
  EXPECT_EQ(MinimumPeakLowerBound(g), 11);
  EXPECT_EQ(LastInputPeakLowerBound(g), 11);
  EXPECT_EQ(PendingSetPeakLowerBound(g, {.max_depth = 2}).bytes, 11);
  const PendingSetBound deep = PendingSetPeakLowerBound(g);
  EXPECT_EQ(deep.bytes, 12);
  EXPECT_FALSE(deep.timed_out);
  const MinBudget m = FindMinimumBudget(g, {.time_limit_s = 5});
  EXPECT_EQ(m.peak_bytes, 12);
  EXPECT_EQ(m.lower_bound_bytes, 12);
}

// Depth 1 of the game is the last-input bound, and the bound never falls as the game deepens.
TEST(PeakLowerBoundsTest, DepthOneIsTheLastInputBoundAndDeeperIsNeverLower) {
  for (uint32_t seed = 0; seed < 20; ++seed) {
    const Graph g = seed % 2 == 0 ? testing::RandomTrainingGraph(seed, 4)
                                  : testing::RandomUnlabeledDag(seed, 14, 0.3);
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    EXPECT_EQ(PendingSetPeakLowerBound(g, {.max_depth = 1}).bytes, LastInputPeakLowerBound(g));
    int64_t previous = 0;
    for (int32_t depth = 1; depth <= 6; ++depth) {
      const int64_t bound = PendingSetPeakLowerBound(g, {.max_depth = depth}).bytes;
      EXPECT_GE(bound, previous) << "depth " << depth;
      previous = bound;
    }
  }
}

// On 40 tiny random graphs the game never exceeds the least peak of all schedules (brute
// force), says more than the last-input bound somewhere and meets the least peak on most.
TEST(PeakLowerBoundsLongTest, NeverAboveTheLeastPeakOnTinyGraphs) {
  int32_t tighter = 0, exact = 0;
  for (uint32_t seed = 0; seed < 40; ++seed) {
    const Graph g = seed % 4 == 0 ? testing::RandomTrainingGraph(seed, 2)
                                  : testing::RandomUnlabeledDag(seed, 6, 0.35 + 0.05 * (seed % 5));
    SCOPED_TRACE(::testing::Message() << g.name() << " seed " << seed);
    const int64_t least = testing::LeastPeak(testing::AllSchedules(g));
    const PendingSetBound game = PendingSetPeakLowerBound(g);
    EXPECT_FALSE(game.timed_out);
    EXPECT_LE(LastInputPeakLowerBound(g), game.bytes);
    EXPECT_LE(game.bytes, least);
    if (game.bytes > LastInputPeakLowerBound(g)) ++tighter;
    if (game.bytes == least) ++exact;
  }
  EXPECT_GT(tighter, 0);
  EXPECT_GT(exact, 20);
}

// On random layered DAGs too large for brute force, the bound stays below the peak of every
// schedule the baselines and eviction find at any budget, and above the last-input bound.
TEST(PeakLowerBoundsTest, NeverAboveAHeuristicsPeakOnLayeredGraphs) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const Graph g = RandomLayeredGraph({.nodes = 60, .width = 4, .edges = 150, .seed = seed,
                                        .min_bytes = 1, .max_bytes = 16});
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const PendingSetBound game = PendingSetPeakLowerBound(g, {.time_limit_s = 5});
    EXPECT_GE(game.bytes, LastInputPeakLowerBound(g));
    int64_t least_found = Simulate(g, ScheduleFromCheckpoints(g, StageMatrix(g.size(), g.size())))
                              .peak_bytes;  // holding nothing across stages
    for (const StrategySpec& spec : BaselineStrategies()) {
      if (spec.applies(g)) least_found = std::min(least_found, spec.run(g, game.bytes).peak_bytes);
    }
    for (int64_t budget = game.bytes; budget <= 4 * game.bytes; budget += game.bytes / 4) {
      least_found = std::min(least_found, Evict(g, budget).peak_bytes);
    }
    EXPECT_LE(game.bytes, least_found);
  }
}

}  // namespace
}  // namespace remat
