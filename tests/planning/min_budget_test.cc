// The smallest budget (issue 26, item 3): its bounds are valid against the least peak of every
// schedule of tiny graphs (brute force over all checkpoint matrices), its schedule is real, and
// the gap between them is what it reports.
#include "planning/min_budget.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "core/simulator.h"
#include "solvers/brute_force.h"
#include "strategies/registry.h"
#include "testing/random_graphs.h"

namespace remat {
namespace {

// v reads a (4 B) and b (4 B); a reads x (8 B), b reads y (8 B). Whichever of a and b is
// computed last, the other is live beside it and its 8-byte input: 16 B, the least peak (x, a,
// y, b, v freeing x before y). A node and its inputs alone say 12 B.
TEST(MinBudgetTest, HandCheckedLastInputBound) {
  std::vector<Node> nodes = {{.name = "x", .cost = 1, .bytes = 8}, {.name = "a", .cost = 1, .bytes = 4},
                             {.name = "y", .cost = 1, .bytes = 8}, {.name = "b", .cost = 1, .bytes = 4},
                             {.name = "v", .cost = 1, .bytes = 1}};
  const Graph g(nodes, {{0, 1}, {2, 3}, {1, 4}, {3, 4}});
  EXPECT_EQ(MinimumPeakLowerBound(g), 12);
  EXPECT_EQ(LastInputPeakLowerBound(g), 16);
  EXPECT_EQ(testing::LeastPeak(testing::AllSchedules(g)), 16);
  const MinBudget m = FindMinimumBudget(g, {.time_limit_s = 5});
  EXPECT_EQ(m.peak_bytes, 16);
  EXPECT_EQ(m.lower_bound_bytes, 16);
  EXPECT_DOUBLE_EQ(m.gap(), 0.0);
}

// On tiny random graphs: MinimumPeakLowerBound <= LastInputPeakLowerBound <= the least peak of
// every schedule <= the peak found, which its schedule really reaches; the bound says more than
// the minimum peak somewhere, and the search finds the least peak on most graphs.
TEST(MinBudgetLongTest, BoundsAreValidAndTheScheduleIsRealOnTinyGraphs) {
  int32_t tighter = 0, exact = 0, graphs = 0;
  for (uint32_t seed = 0; seed < 40; ++seed) {
    const Graph g = seed % 4 == 0 ? testing::RandomTrainingGraph(seed, 2)
                                  : testing::RandomUnlabeledDag(seed, 6, 0.6);
    SCOPED_TRACE(::testing::Message() << g.name() << " seed " << seed);
    const int64_t least = testing::LeastPeak(testing::AllSchedules(g));
    const int64_t last_input = LastInputPeakLowerBound(g);
    EXPECT_LE(MinimumPeakLowerBound(g), last_input);
    EXPECT_LE(last_input, least);
    if (last_input > MinimumPeakLowerBound(g)) ++tighter;
    const MinBudget m = FindMinimumBudget(g, {.time_limit_s = 3});
    EXPECT_LE(m.lower_bound_bytes, least);
    EXPECT_GE(m.peak_bytes, least);
    EXPECT_EQ(Simulate(g, m.schedule.schedule).peak_bytes, m.peak_bytes);
    EXPECT_EQ(m.schedule.peak_bytes, m.peak_bytes);
    EXPECT_GE(m.gap(), 0.0);
    if (m.peak_bytes == least) ++exact;
    ++graphs;
  }
  EXPECT_GT(tighter, 0);
  EXPECT_GE(exact, graphs / 2);
}

// The smallest budget found is never above what a baseline reaches when asked for the least
// budget (Griewank's fewest slots reach 30% of GPT-2's no-remat peak, where eviction stopped at
// 79%), nor above the no-remat peak.
TEST(MinBudgetTest, NeverAboveABaselinesLowestPeak) {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Graph g = testing::RandomTrainingGraph(seed, 8);
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const MinBudget m = FindMinimumBudget(g, {.time_limit_s = 2});
    for (const StrategySpec& spec : BaselineStrategies()) {
      if (!spec.applies(g)) continue;
      EXPECT_LE(m.peak_bytes, spec.run(g, MinimumPeakLowerBound(g)).peak_bytes) << spec.name;
    }
    EXPECT_LE(m.lower_bound_bytes, m.peak_bytes);
  }
}

}  // namespace
}  // namespace remat
