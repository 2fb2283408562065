#include "solvers/rounding.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/training_graph.h"
#include "solvers/checkmate_solver.h"

namespace remat {
namespace {

TEST(RoundingTest, DeterministicRoundingFitsAndIsNeverBelowTheOptimum) {
  const Graph g = LinearGraph(8);
  for (int64_t budget : {5, 6, 7, 8, 10}) {
    SCOPED_TRACE(budget);
    const OptimizerResult optimal = SolveOptimal(g, budget);
    ASSERT_EQ(optimal.status, SolveStatus::kOptimal);
    const OptimizerResult approx = SolveApproxDeterministic(g, budget);
    if (approx.status == SolveStatus::kFeasible) {
      ASSERT_TRUE(approx.schedule.has_value());
      EXPECT_LE(approx.schedule->peak_bytes, budget);
      EXPECT_GE(approx.schedule->cost, optimal.schedule->cost);
    }
    const LowerBound lp = LpLowerBound(g, budget);
    ASSERT_EQ(lp.status, SolveStatus::kOptimal);
    EXPECT_LE(lp.cost, optimal.schedule->cost + 1e-6);
  }
}

TEST(RoundingTest, RandomizedRoundingIsReproducibleForASeed) {
  const Graph g = LinearGraph(10);
  const auto a = SolveApproxRandomized(g, 8, {.rounds = 5, .seed = 7});
  const auto b = SolveApproxRandomized(g, 8, {.rounds = 5, .seed = 7});
  ASSERT_EQ(a.schedule.has_value(), b.schedule.has_value());
  if (a.schedule) {
    EXPECT_EQ(a.schedule->schedule, b.schedule->schedule);
  }
}

// linear(8) fits in 3 B (the optimum recomputes to cost 45), but rounding plans at
// (1 - eps) of the budget, 2 B, where nothing fits: "none_found", never the proof "infeasible".
TEST(RoundingTest, NoRoundingAtAFeasibleBudgetIsNotReportedInfeasible) {
  const Graph graph = LinearGraph(8);
  const OptimizerResult optimal = SolveOptimal(graph, 3);
  ASSERT_TRUE(optimal.schedule.has_value());
  EXPECT_EQ(optimal.schedule->status, FitStatus::kFits);
  const OptimizerResult approx = SolveApproxDeterministic(graph, 3);
  EXPECT_EQ(approx.status, SolveStatus::kNoSolution);
  EXPECT_STREQ(SolveStatusName(approx.status), "none_found");
  EXPECT_EQ(SolveApproxRandomized(graph, 3).status, SolveStatus::kNoSolution);
}

TEST(RoundingTest, RejectsAnAllowanceOutsideZeroToOne) {
  EXPECT_THROW(SolveApproxDeterministic(LinearGraph(3), 5, {.eps = 1.5}), InputError);
}

}  // namespace
}  // namespace remat
