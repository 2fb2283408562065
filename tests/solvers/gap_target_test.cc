// Issue 26, item 1: the gap target. One formula says "within the gap" (WithinGap) and the
// targets derived from it agree with it; optimal, the window search and the bound stop on it
// and say why they stopped.
#include <gtest/gtest.h>

#include <cmath>

#include "core/training_graph.h"
#include "solvers/absence_bound.h"
#include "solvers/brute_force.h"
#include "solvers/checkmate_solver.h"
#include "solvers/lower_bound.h"
#include "solvers/window_search.h"
#include "strategies/best_heuristic.h"
#include "testing/budgets.h"
#include "testing/random_graphs.h"

namespace remat {
namespace {

using testing::MiddleBudget;

TEST(GapTargetTest, TargetsAgreeWithTheOneFormula) {
  for (const double gap : {0.0, 1e-4, 1e-3, 0.05, 0.5}) {
    for (const double bound : {1.0, 40.0, 2.5e12}) {
      SCOPED_TRACE(::testing::Message() << "gap " << gap << " bound " << bound);
      const double target = GapTargetCost(bound, gap);
      EXPECT_TRUE(WithinGap(target * (1 - 1e-12), bound, gap));
      EXPECT_FALSE(WithinGap(target * (1 + 1e-9) + 1e-9, bound, gap));
      for (const double cost : {bound, 1.5 * bound, 100.0 * bound}) {
        const double needed = BoundNeededFor(cost, gap);
        EXPECT_TRUE(WithinGap(cost, needed, gap));
        EXPECT_FALSE(WithinGap(cost, needed - 1e-6 * cost, gap));
        // The relative gap itself agrees wherever costs are at least 1.
        EXPECT_EQ(RelativeGap(cost, bound) <= gap + 1e-15, WithinGap(cost, bound, gap));
      }
    }
  }
  EXPECT_TRUE(std::isinf(GapTargetCost(10, 1.0)));
}

// Tiny graphs are proven exactly (the oracle's cost), and optimal says so.
TEST(GapTargetTest, OptimalSaysItsCostIsProvenOnTinyGraphs) {
  const Graph g = LinearGraph(8);
  const OptimizerResult r = SolveOptimal(g, 4);
  ASSERT_EQ(r.status, SolveStatus::kOptimal) << r.message;
  EXPECT_EQ(r.stop_reason, "proven optimal");
  EXPECT_EQ(SolveOptimal(g, 2).stop_reason, "infeasible");
}

// With a wide gap target optimal returns a schedule the bound proves within it, and says the
// target stopped it; at 0 it must match the brute-force optimum.
TEST(GapTargetTest, OptimalStopsAtAWideTargetWithAScheduleWithinIt) {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    const Graph g = testing::RandomTrainingGraph(seed, 2);
    const int64_t budget = MiddleBudget(g);
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " budget " << budget);
    const double oracle = testing::OracleCost(testing::AllSchedules(g), budget);
    ASSERT_TRUE(std::isfinite(oracle));
    const OptimizerResult wide = SolveOptimal(g, budget, {.mip = {.relative_gap = 0.2}});
    ASSERT_TRUE(wide.schedule);
    EXPECT_TRUE(WithinGap(wide.schedule->cost, wide.lower_bound, 0.2));
    EXPECT_LE(wide.lower_bound, oracle + 1e-6);  // the bound stays valid
    EXPECT_TRUE(wide.stop_reason == "gap target reached" || wide.stop_reason == "proven optimal")
        << wide.stop_reason;
    const OptimizerResult exact = SolveOptimal(g, budget, {.mip = {.relative_gap = 0}});
    ASSERT_TRUE(exact.schedule);
    EXPECT_DOUBLE_EQ(exact.schedule->cost, oracle);
    EXPECT_EQ(exact.stop_reason, "proven optimal");
  }
}

// A window search that stops improving ends: started from a schedule no window improves, with
// a long time limit and a short patience, it reports that it stalled (or proved every window
// optimal) and keeps the start.
TEST(GapTargetTest, AWindowSearchWithoutImprovementEndsWithinItsPatience) {
  const Graph g = testing::RandomTrainingGraph(11, 30);
  const int64_t budget = MiddleBudget(g);
  const StrategyResult start = BestHeuristic(g, budget);
  ASSERT_EQ(start.status, FitStatus::kFits);
  const WindowSearchResult first = ImproveByWindows(g, budget, start, {.time_limit_s = 5});
  const WindowSearchResult again =
      ImproveByWindows(g, budget, first.best, {.time_limit_s = 600, .patience_s = 0.5});
  EXPECT_TRUE(again.stalled || again.local_optimum);
  EXPECT_EQ(again.improvements == 0, again.best.cost == first.best.cost);
  EXPECT_LE(again.best.cost, first.best.cost);
}

// The window search stops once the cost meets its target (the gap target of optimal).
TEST(GapTargetTest, AWindowSearchStopsAtItsTargetCost) {
  const Graph g = testing::RandomTrainingGraph(11, 30);
  const int64_t budget = MiddleBudget(g);
  const StrategyResult start = BestHeuristic(g, budget);
  const WindowSearchResult r =
      ImproveByWindows(g, budget, start, {.time_limit_s = 600, .stop_at_cost = start.cost});
  EXPECT_TRUE(r.reached_target);
  EXPECT_EQ(r.windows, 0);
}

// The absence-gap bound told the cost it must prove stops at it, and stays a valid bound: never
// above the MILP optimum, never above the untold bound, at least the target when it stopped on it.
TEST(GapTargetTest, TheBoundStopsAtItsTargetAndStaysValid) {
  int32_t stopped_early = 0;
  for (uint32_t seed = 0; seed < 6; ++seed) {
    const Graph g = testing::RandomTrainingGraph(seed, 6 + static_cast<int32_t>(seed));
    const int64_t budget = MiddleBudget(g);
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const AbsenceBound full = AbsenceGapLowerBound(g, budget);
    if (full.status != SolveStatus::kOptimal || full.cost <= g.total_cost() + 1e-6) continue;
    const double target = 0.5 * (g.total_cost() + full.cost);
    const AbsenceBound told = AbsenceGapLowerBound(g, budget, {.target_cost = target});
    EXPECT_LE(told.cost, full.cost + 1e-6);
    if (told.status == SolveStatus::kFeasible) {
      ++stopped_early;
      EXPECT_GE(told.cost, target * (1 - 1e-6));
    }
    const BestBound best = BestLowerBound(g, budget, {.target_cost = target});
    EXPECT_NE(best.note.find("LP not needed"), std::string::npos) << best.note;
    const OptimizerResult opt = SolveOptimal(g, budget, {.mip = {.time_limit_s = 30}});
    if (opt.status == SolveStatus::kOptimal) EXPECT_LE(told.cost, opt.schedule->cost + 1e-6);
  }
  SUCCEED() << stopped_early << " bounds stopped before the covering optimum";
}

}  // namespace
}  // namespace remat
