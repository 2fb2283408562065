// Planning at one budget: rows in the order asked, each gap from the one formula against the
// one bound of the report, and the cheapest fitting row as the best.
#include "planning/plan_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/training_graph.h"
#include "strategies/checkpoint_all.h"
#include "strategies/eviction.h"
#include "testing/random_graphs.h"

namespace remat {
namespace {

TEST(RelativeGapTest, IsTheShareOfTheCostAboveTheBound) {
  // A schedule of cost 10 against a bound of 8 is 20% from optimal.
  EXPECT_DOUBLE_EQ(RelativeGap(10, 8), 0.2);
  // A bound above the cost (rounding) is a gap of 0, and no gap is defined at cost 0.
  EXPECT_EQ(RelativeGap(10, 11), 0.0);
  EXPECT_TRUE(std::isnan(RelativeGap(0, 0)));
}

TEST(PlanReportTest, NoRematReferenceOfALinearGraph) {
  // LinearGraph(4): 9 unit nodes, each computed once.
  const PlanReport r = PlanAtBudget(LinearGraph(4), BudgetRequest{.budget_text = "100%"},
                                    {.strategies = {"checkpoint-all"}, .lower_bound = false});
  EXPECT_EQ(r.no_remat.cost, 9.0);
  EXPECT_EQ(r.budget.activation_bytes, r.no_remat.peak_bytes);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_TRUE(r.rows[0].fits());
  EXPECT_FALSE(r.bound);
  EXPECT_FALSE(r.Gap(r.rows[0]));  // no bound asked, no gap
}

TEST(PlanReportTest, EveryRowsGapUsesTheReportsBound) {
  const Graph g = testing::RandomTrainingGraph(4, 8);
  const std::vector<std::string> names = {"checkpoint-all", "chen-sqrtn-linear", "evict",
                                          "local-search"};
  const PlanReport r = PlanAtBudget(g, BudgetRequest{.budget_text = "80%"},
                                    {.strategies = names, .settings = {.time_limit_s = 20}});
  ASSERT_EQ(r.rows.size(), names.size());
  ASSERT_TRUE(r.lower_bound());
  for (size_t i = 0; i < names.size(); ++i) {
    const StrategyRow& row = r.rows[i];
    EXPECT_EQ(row.strategy, names[i]);
    if (!row.fits()) {
      EXPECT_FALSE(r.Gap(row)) << row.strategy;
      continue;
    }
    // A valid bound is never above a fitting schedule's cost.
    EXPECT_LE(*r.lower_bound(), row.result->cost * (1 + 1e-9)) << row.strategy;
    EXPECT_DOUBLE_EQ(*r.Gap(row), (row.result->cost - *r.lower_bound()) / row.result->cost);
  }
  const StrategyRow* best = r.Best();
  ASSERT_NE(best, nullptr);
  for (const StrategyRow& row : r.rows) {
    if (row.fits()) {
      EXPECT_LE(best->result->cost, row.result->cost) << row.strategy;
    }
  }
}

TEST(PlanReportTest, ABudgetBelowTheMinimumPeakIsReportedAndNothingFits) {
  const Graph g = testing::RandomTrainingGraph(2, 6);
  const int64_t minimum = MinimumPeakLowerBound(g);
  const PlanReport r = PlanAtBudget(g, Budget{.activation_bytes = minimum - 1},
                                    {.strategies = {"evict"}, .settings = {.time_limit_s = 5}});
  EXPECT_TRUE(r.below_minimum_peak());
  EXPECT_FALSE(r.any_fits());
  EXPECT_EQ(r.Best(), nullptr);
  // The best bound proves it too (the absence-gap bound sees the node that cannot fit), so
  // there is no cost bound to report.
  ASSERT_TRUE(r.bound);
  EXPECT_EQ(r.bound->status, SolveStatus::kInfeasible);
  EXPECT_FALSE(r.lower_bound());
}

TEST(PlanReportTest, ATotalTimeLimitIsSharedByTheBoundAndEveryStrategy) {
  // A microsecond in all: checkpoint-all (which takes no time limit) may start within it, but
  // it spends it, so evict and the bound after it are skipped. Without the total each would run.
  const PlanRequest request{.strategies = {"checkpoint-all", "evict"},
                            .settings = {.time_limit_s = 1e-6},
                            .total_time_limit_s = 1e-6};
  const PlanReport r = PlanAtBudget(LinearGraph(4), BudgetRequest{.budget_text = "100%"}, request);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_FALSE(r.rows[1].result);
  EXPECT_EQ(r.rows[1].solver_status, "skipped");
  EXPECT_FALSE(r.bound);
  // A total of 0 is per run, as `remat solve --time-limit`: the same request plans.
  PlanRequest per_run = request;
  per_run.total_time_limit_s = 0;
  EXPECT_TRUE(PlanAtBudget(LinearGraph(4), BudgetRequest{.budget_text = "100%"}, per_run)
                  .rows[0].fits());
}

// Issue 24, item 10 and issue 34, item 1: a row is optimal only when proven, i.e. its cost
// meets the one best bound within 1e-4 whatever the gap target; optimal's row within a looser
// target is "within" it; any other schedule within the budget is feasible.
TEST(PlanReportTest, VerdictIsOptimalOnlyWhenTheCostMeetsTheBound) {
  StrategyRow row{.strategy = "chen-sqrtn-linear"};
  EXPECT_EQ(VerdictOf(row, 20.0, 1e-4), RowVerdict::kNoSchedule);
  row.result = StrategyResult{.status = FitStatus::kFits, .cost = 21};
  row.result->status = FitStatus::kOverBudget;
  EXPECT_EQ(VerdictOf(row, 20.0, 1e-4), RowVerdict::kOverBudget);
  row.result->status = FitStatus::kFits;
  EXPECT_EQ(VerdictOf(row, 20.0, 1e-4), RowVerdict::kFeasible);
  EXPECT_EQ(VerdictOf(row, std::nullopt, 1e-4), RowVerdict::kFeasible);
  EXPECT_EQ(VerdictOf(row, 21.0, 1e-4), RowVerdict::kOptimal);
  EXPECT_EQ(VerdictOf(row, 21.0 - 1e-3, 1e-4), RowVerdict::kOptimal);  // within 1e-4 x 21
  // A gap target never relabels a heuristic: chen at 19% is feasible whatever --gap says.
  EXPECT_EQ(VerdictOf(row, 17.0, 1.0), RowVerdict::kFeasible);
  EXPECT_EQ(VerdictOf(row, 21.0 - 0.01, 1e-3), RowVerdict::kFeasible);
  // A solver's word alone is no proof: the report raises its bound to the solver's own.
  row.solver_status = "optimal";
  EXPECT_EQ(VerdictOf(row, 20.0, 1e-4), RowVerdict::kFeasible);
  // Optimal stopped at a 0.1% target: within 0.1%, not optimal; at 0 it needs 1e-4 too.
  row.strategy = "optimal";
  EXPECT_EQ(VerdictOf(row, 21.0 - 0.01, 1e-3), RowVerdict::kWithinGap);
  EXPECT_EQ(VerdictOf(row, 21.0 - 0.01, 0.0), RowVerdict::kFeasible);
  EXPECT_EQ(VerdictOf(row, 21.0 - 1e-3, 0.0), RowVerdict::kOptimal);
  EXPECT_EQ(VerdictOf(row, 17.0, 1e-3), RowVerdict::kFeasible);
  EXPECT_STREQ(RowVerdictName(RowVerdict::kFeasible), "feasible");
  EXPECT_STREQ(RowVerdictName(RowVerdict::kOptimal), "optimal");
  EXPECT_EQ(RowVerdictText(RowVerdict::kWithinGap, 1e-3), "within 0.1%");
  EXPECT_EQ(RowVerdictText(RowVerdict::kOptimal, 1e-3), "optimal");
}

// The rows' solver_status says what the verdict says: optimal only when proven, within_gap at
// the gap target, feasible otherwise; heuristics keep none.
TEST(PlanReportTest, SolverStatusFollowsTheVerdict) {
  std::vector<StrategyRow> rows(4);
  rows[0] = {.strategy = "optimal", .solver_status = "optimal"};
  rows[0].result = StrategyResult{.status = FitStatus::kFits, .cost = 100};
  rows[1] = rows[0];
  rows[1].solver_status = "feasible";  // stopped at its time limit, but the bound proves it
  rows[2] = {.strategy = "approx", .solver_status = "feasible"};
  rows[2].result = StrategyResult{.status = FitStatus::kFits, .cost = 120};
  rows[3] = {.strategy = "chen-sqrtn-linear"};
  rows[3].result = StrategyResult{.status = FitStatus::kFits, .cost = 100};
  std::vector<StrategyRow> at_gap = rows;
  SettleSolverStatus(at_gap, 99.95, 1e-3);
  EXPECT_EQ(at_gap[0].solver_status, "within_gap");
  EXPECT_EQ(at_gap[1].solver_status, "within_gap");
  EXPECT_EQ(at_gap[2].solver_status, "feasible");
  EXPECT_EQ(at_gap[3].solver_status, "");
  std::vector<StrategyRow> proven = rows;
  SettleSolverStatus(proven, 99.995, 1e-3);
  EXPECT_EQ(proven[0].solver_status, "optimal");
  EXPECT_EQ(proven[1].solver_status, "optimal");
  EXPECT_EQ(proven[2].solver_status, "feasible");
  std::vector<StrategyRow> unbounded = rows;
  SettleSolverStatus(unbounded, std::nullopt, 1e-3);
  EXPECT_EQ(unbounded[0].solver_status, "feasible");
}

// Optimal's own proven bound is the report's one bound when it is the best (here the only one):
// the header shows it, every gap uses it, and optimal's row is proven optimal against it.
TEST(PlanReportTest, OptimalsOwnBoundIsTheReportsBoundWhenHigher) {
  const PlanReport r =
      PlanAtBudget(LinearGraph(6), BudgetRequest{.budget_text = "70%"},
                   {.strategies = {"optimal", "chen-sqrtn-linear"},
                    .settings = {.time_limit_s = 20},
                    .lower_bound = false});
  ASSERT_TRUE(r.rows[0].fits()) << r.rows[0].note;
  ASSERT_EQ(r.rows[0].solver_status, "optimal");
  ASSERT_TRUE(r.bound);
  EXPECT_EQ(r.bound->source, "optimal's solver");
  ASSERT_TRUE(r.lower_bound());
  EXPECT_DOUBLE_EQ(*r.lower_bound(), *r.rows[0].own_bound);
  EXPECT_EQ(r.Verdict(r.rows[0]), RowVerdict::kOptimal);
  ASSERT_TRUE(r.rows[1].fits());
  EXPECT_DOUBLE_EQ(*r.Gap(r.rows[1]), RelativeGap(r.rows[1].result->cost, *r.lower_bound()));
}

// Rows come back in the order asked, but optimal runs last: it starts from the best schedule
// found before it, and is never costlier than any other row.
TEST(PlanReportTest, OptimalRunsLastAndIsNeverCostlierThanAnotherRow) {
  const Graph g = testing::RandomTrainingGraph(4, 8);
  const PlanReport r =
      PlanAtBudget(g, BudgetRequest{.budget_text = "90%"},
                   {.strategies = {"optimal", "checkpoint-all", "chen-sqrtn-linear", "approx"},
                    .settings = {.time_limit_s = 20}});
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.rows[0].strategy, "optimal");
  EXPECT_EQ(r.rows[3].strategy, "approx");
  ASSERT_TRUE(r.rows[0].fits()) << r.rows[0].note;
  for (const StrategyRow& row : r.rows) {
    if (row.fits()) {
      EXPECT_LE(r.rows[0].result->cost, row.result->cost) << row.strategy;
    }
  }
  EXPECT_EQ(r.Best(), &r.rows[0]);
}

// Issue 26, item 2, as a property: on random graphs and budgets, with every strategy and short
// limits, optimal is never costlier than any other strategy of the same plan.
TEST(PlanReportTest, OptimalIsNeverCostlierThanAnyOtherStrategyOfThePlan) {
  int32_t compared = 0;
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    const Graph g = seed % 2 == 1 ? testing::RandomTrainingGraph(seed, 3 + 2 * static_cast<int32_t>(seed))
                                  : testing::RandomUnlabeledDag(seed, 8 + 3 * static_cast<int32_t>(seed), 0.3);
    for (const char* budget : {"60%", "85%"}) {
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " budget " << budget);
      const PlanReport r = PlanAtBudget(g, BudgetRequest{.budget_text = budget},
                                        {.strategies = ParseStrategyList("all", g),
                                         .settings = {.time_limit_s = 1}});
      const auto optimal = std::find_if(r.rows.begin(), r.rows.end(),
                                        [](const StrategyRow& row) { return row.strategy == "optimal"; });
      ASSERT_NE(optimal, r.rows.end());
      for (const StrategyRow& row : r.rows) {
        if (!row.fits()) continue;
        ASSERT_TRUE(optimal->fits()) << row.strategy << " fits, optimal does not: " << optimal->note;
        EXPECT_LE(optimal->result->cost, row.result->cost) << row.strategy;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 20);
}

// A known schedule (PlanRequest::starts, torch's own partitions in Python) is a start:
// local-search and optimal are never costlier than the cheapest one within the budget, and
// one over the budget is not itself a start (it is evicted to fit: below).
TEST(PlanReportTest, KnownSchedulesWithinTheBudgetBoundLocalSearchAndOptimal) {
  int32_t compared = 0;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const Graph g = testing::RandomTrainingGraph(seed, 12 + 2 * static_cast<int32_t>(seed));
    // The known schedule: optimal's with a long limit, at a budget where the heuristics
    // alone may be costlier.
    const PlanReport exact = PlanAtBudget(g, BudgetRequest{.budget_text = "60%"},
                                          {.strategies = {"optimal"},
                                           .settings = {.time_limit_s = 20}});
    if (!exact.rows[0].fits()) continue;
    const StrategyResult& known = *exact.rows[0].result;
    const PlanReport without = PlanAtBudget(g, BudgetRequest{.budget_text = "60%"},
                                            {.strategies = {"local-search"},
                                             .settings = {.time_limit_s = 5}});
    const PlanReport with = PlanAtBudget(
        g, BudgetRequest{.budget_text = "60%"},
        {.strategies = {"local-search", "optimal"},
         .settings = {.time_limit_s = 0.01},
         .starts = {{"too big", CheckpointAll(g, 0).schedule}, {"known", known.schedule}}});
    ASSERT_TRUE(with.rows[0].fits()) << with.rows[0].note;
    ASSERT_TRUE(with.rows[1].fits()) << with.rows[1].note;
    EXPECT_LE(with.rows[0].result->cost, known.cost * (1 + 1e-12)) << seed;
    EXPECT_LE(with.rows[1].result->cost, known.cost * (1 + 1e-12)) << seed;
    if (without.rows[0].fits() && without.rows[0].result->cost > known.cost * (1 + 1e-9)) {
      ++compared;  // the start mattered: local-search alone was costlier
    }
  }
  EXPECT_GE(compared, 1) << "no graph where the start matters: the test has no teeth";
}

// A known schedule over the budget is made to fit by evicting from its holds (EvictFrom):
// local-search and optimal are never costlier than that.
TEST(PlanReportTest, AKnownScheduleOverTheBudgetIsEvictedToFit) {
  int32_t compared = 0;
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    const Graph g = testing::RandomTrainingGraph(seed, 12 + 2 * static_cast<int32_t>(seed));
    // The start: optimal's schedule at a looser budget (recomputing, over the tighter one).
    const PlanReport loose = PlanAtBudget(g, BudgetRequest{.budget_text = "75%"},
                                          {.strategies = {"optimal"},
                                           .settings = {.time_limit_s = 10}});
    if (!loose.rows[0].fits()) continue;
    const PlanReport without = PlanAtBudget(g, BudgetRequest{.budget_text = "60%"},
                                            {.strategies = {"local-search"},
                                             .settings = {.time_limit_s = 5}});
    const int64_t budget = without.budget.activation_bytes;
    const StrategyResult& over = *loose.rows[0].result;
    if (over.peak_bytes <= budget) continue;
    const StrategyResult evicted = EvictFrom(g, budget, over.schedule);
    if (evicted.status != FitStatus::kFits) continue;
    const PlanReport with = PlanAtBudget(
        g, BudgetRequest{.budget_text = "60%"},
        {.strategies = {"local-search", "optimal"},
         .settings = {.time_limit_s = 0.01},
         .starts = {{"over", over.schedule}}});
    ASSERT_TRUE(with.rows[0].fits()) << with.rows[0].note;
    ASSERT_TRUE(with.rows[1].fits()) << with.rows[1].note;
    EXPECT_LE(with.rows[0].result->cost, evicted.cost * (1 + 1e-12)) << seed;
    EXPECT_LE(with.rows[1].result->cost, evicted.cost * (1 + 1e-12)) << seed;
    if (without.rows[0].fits() && without.rows[0].result->cost > evicted.cost * (1 + 1e-9)) {
      ++compared;  // the evicted start mattered: local-search alone was costlier
    }
  }
  EXPECT_GE(compared, 1) << "no graph where the evicted start matters: the test has no teeth";
}

}  // namespace
}  // namespace remat
