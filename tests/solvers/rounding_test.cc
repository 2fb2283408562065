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

// linear(8) fits in 3 B (the optimum recomputes to cost 45), its minimum peak. (1 - eps) of the
// budget, 2 B, is below it, where nothing fits: the LP then sees the budget itself and the
// rounding finds a schedule (before, it gave up with "none_found").
TEST(RoundingTest, RoundsFromTheBudgetItselfWhenTheReducedBudgetIsBelowTheMinimumPeak) {
  const Graph graph = LinearGraph(8);
  ASSERT_EQ(MinimumPeakLowerBound(graph), 3);
  const OptimizerResult optimal = SolveOptimal(graph, 3);
  ASSERT_TRUE(optimal.schedule.has_value());
  const std::shared_ptr<const Relaxation> relaxation = SolveRelaxation(graph, 3, 0.1, {});
  EXPECT_EQ(relaxation->lp_budget_bytes, 3);
  EXPECT_NE(relaxation->note.find("below the minimum peak"), std::string::npos);
  for (const OptimizerResult& approx :
       {SolveApproxDeterministic(graph, 3), SolveApproxRandomized(graph, 3)}) {
    ASSERT_TRUE(approx.schedule.has_value()) << approx.message;
    EXPECT_EQ(approx.status, SolveStatus::kFeasible) << approx.message;
    EXPECT_EQ(approx.schedule->status, FitStatus::kFits);
    EXPECT_LE(approx.schedule->peak_bytes, 3);
    EXPECT_GE(approx.schedule->cost, optimal.schedule->cost - 1e-9);
    EXPECT_NE(approx.message.find("the LP saw the budget itself"), std::string::npos);
  }
}

// Above the minimum peak the reduced budget keeps its room for rounding (the paper's rule).
TEST(RoundingTest, KeepsTheReducedBudgetWhereTheLpIsFeasible) {
  const Graph graph = LinearGraph(8);
  const std::shared_ptr<const Relaxation> relaxation = SolveRelaxation(graph, 8, 0.25, {});
  EXPECT_EQ(relaxation->lp_budget_bytes, 6);
  EXPECT_TRUE(relaxation->note.empty()) << relaxation->note;
  EXPECT_EQ(relaxation->out.status, SolveStatus::kOptimal);
}

// Below the minimum peak the reduced LP is infeasible and so is the LP at the budget itself:
// that LP is a relaxation of every schedule, so its infeasibility is the proof "infeasible".
// Only an infeasible reduced LP, with the budget's own not tried, is "none_found".
TEST(RoundingTest, AnInfeasibleLpAtTheBudgetItselfIsAProof) {
  const Graph graph = LinearGraph(8);
  const OptimizerResult approx = SolveApproxDeterministic(graph, 2);
  EXPECT_EQ(approx.status, SolveStatus::kInfeasible) << approx.message;
  EXPECT_NE(approx.message.find("at the budget itself too"), std::string::npos) << approx.message;
  EXPECT_FALSE(approx.schedule);
}

TEST(RoundingTest, RejectsAnAllowanceOutsideZeroToOne) {
  EXPECT_THROW(SolveApproxDeterministic(LinearGraph(3), 5, {.eps = 1.5}), InputError);
}

}  // namespace
}  // namespace remat
