// Budget grids and sweeps: whole-byte grids with both ends, ranges as users write them, and a
// sweep whose rows agree with planning each budget alone.
#include "planning/budget_sweep.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "planning/plan_report.h"
#include "testing/random_graphs.h"

namespace remat {
namespace {

TEST(BudgetGridTest, EvenlySpacedWholeBytesWithBothEnds) {
  // 3 + floor(7 i / 3) for i = 0..3.
  EXPECT_EQ(BudgetGrid(3, 10, 4), (std::vector<int64_t>{3, 5, 7, 10}));
  EXPECT_EQ(BudgetGrid(3, 10, 8), (std::vector<int64_t>{3, 4, 5, 6, 7, 8, 9, 10}));
}

TEST(BudgetGridTest, MorePointsThanBytesGiveEachBudgetOnce) {
  // 10 points over 3 bytes: floor(2 i / 9) repeats, each budget is kept once.
  EXPECT_EQ(BudgetGrid(5, 7, 10), (std::vector<int64_t>{5, 6, 7}));
}

TEST(BudgetGridTest, OnePointOrAnEmptySpanIsTheUpperEnd) {
  EXPECT_EQ(BudgetGrid(3, 10, 1), (std::vector<int64_t>{10}));
  EXPECT_EQ(BudgetGrid(10, 10, 5), (std::vector<int64_t>{10}));
}

TEST(BudgetGridTest, LargeBudgetsDoNotOverflow) {
  // 16e9-byte spans times the index stay exact in long double.
  const auto grid = BudgetGrid(1'000'000'000'000, 17'000'000'000'000, 3);
  EXPECT_EQ(grid, (std::vector<int64_t>{1'000'000'000'000, 9'000'000'000'000,
                                        17'000'000'000'000}));
}

TEST(BudgetRangeTest, DefaultsRunFromTheMinimumPeakToTheNoRematPeak) {
  const Graph g = testing::RandomTrainingGraph(3, 6);
  const int64_t peak = NoRemat(g).peak_bytes;
  const std::vector<int64_t> grid = ResolveBudgetGrid({.points = 3}, g, peak);
  ASSERT_FALSE(grid.empty());
  EXPECT_EQ(grid.front(), std::min(MinimumPeakLowerBound(g), peak));
  EXPECT_EQ(grid.back(), peak);
}

TEST(BudgetRangeTest, PercentagesAreOfTheNoRematPeakAndMessagesUseTheGivenNames) {
  const Graph g = testing::RandomTrainingGraph(3, 6);
  // 50% and 100% of a 1000-byte reference.
  EXPECT_EQ(ResolveBudgetGrid({.from_text = "50%", .to_text = "100%", .points = 2}, g, 1000),
            (std::vector<int64_t>{500, 1000}));
  try {
    ResolveBudgetGrid({.from_text = "90%", .to_text = "10%", .from_name = "from_=",
                       .to_name = "to="},
                      g, 1000);
    FAIL() << "an empty range must be refused";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("from_= 900 B is above to= 100 B"), std::string::npos)
        << e.what();
  }
}

TEST(BudgetSweepTest, EachPointAgreesWithPlanningThatBudgetAlone) {
  const Graph g = testing::RandomTrainingGraph(11, 7);
  const int64_t peak = NoRemat(g).peak_bytes;
  const std::vector<int64_t> budgets = {peak * 3 / 4, peak};
  const std::vector<std::string> names = {"checkpoint-all", "evict", "local-search"};
  const SolverSettings settings{.time_limit_s = 20};
  int starts = 0, finishes = 0;
  const std::vector<SweepPoint> points = RunBudgetSweep(
      g, budgets, names, settings, true,
      {.start = [&](const std::string&) { ++starts; }, .finish = [&] { ++finishes; }});
  ASSERT_EQ(points.size(), 2u);
  // One bound and three strategies at each of two budgets.
  EXPECT_EQ(starts, SweepWorkItems(2, 3, true));
  EXPECT_EQ(finishes, starts);
  for (const SweepPoint& point : points) {
    const PlanReport alone = PlanAtBudget(g, Budget{.activation_bytes = point.budget_bytes},
                                          {.strategies = names, .settings = settings});
    ASSERT_EQ(point.rows.size(), alone.rows.size());
    EXPECT_EQ(point.lower_bound, alone.lower_bound());
    for (size_t i = 0; i < names.size(); ++i) {
      EXPECT_EQ(point.rows[i].fits(), alone.rows[i].fits()) << names[i];
      if (point.rows[i].result && alone.rows[i].result) {
        EXPECT_DOUBLE_EQ(point.rows[i].result->cost, alone.rows[i].result->cost) << names[i];
      }
    }
  }
}

}  // namespace
}  // namespace remat
