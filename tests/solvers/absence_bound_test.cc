// The absence-gap bound is valid: never above the brute-force optimum on tiny graphs, the
// MILP optimum on small ones, or any strategy's simulated cost on 200 random graphs.
#include "solvers/absence_bound.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "solvers/brute_force.h"
#include "solvers/checkmate_solver.h"
#include "solvers/lower_bound.h"
#include "strategies/checkpoint_all.h"
#include "strategies/eviction.h"
#include "strategies/registry.h"
#include "testing/random_graphs.h"

namespace remat {
namespace {

int64_t NoRematPeak(const Graph& g) {
  return CheckpointAll(g, std::numeric_limits<int64_t>::max()).peak_bytes;
}

// Budgets from just below the minimum peak to the no-remat peak, `count` of them.
std::vector<int64_t> Budgets(const Graph& g, int32_t count) {
  const int64_t lo = MinimumPeakLowerBound(g) - 1, hi = NoRematPeak(g);
  std::vector<int64_t> out;
  for (int32_t k = 0; k < count; ++k) out.push_back(lo + (hi - lo) * k / std::max(1, count - 1));
  return out;
}

// a(4 B) -> b(8 B) -> c(4 B) -> d(4 B), and d reads a; unit costs; budget 12 B. Computing c
// needs b and c live (12 B), so a (read again by d) cannot be held across that stage: it is
// recomputed once. The bound is 4 + 1 = 5, the optimum.
TEST(AbsenceBoundTest, HandCheckedChainWithSkip) {
  std::vector<Node> nodes = {{.name = "a", .cost = 1, .bytes = 4}, {.name = "b", .cost = 1, .bytes = 8},
                             {.name = "c", .cost = 1, .bytes = 4}, {.name = "d", .cost = 1, .bytes = 4}};
  const Graph g(nodes, {{0, 1}, {1, 2}, {2, 3}, {0, 3}});
  const AbsenceBound b = AbsenceGapLowerBound(g, 12);
  ASSERT_EQ(b.status, SolveStatus::kOptimal) << b.message;
  EXPECT_NEAR(b.cost, 5, 1e-5);
  EXPECT_EQ(b.rows, 1);
  EXPECT_EQ(b.columns, 1);
  // At 16 B everything fits: no row, the bound is the sum of costs.
  EXPECT_DOUBLE_EQ(AbsenceGapLowerBound(g, 16).cost, 4);
  // Below c's own need (b + c = 12 B) no schedule exists.
  EXPECT_EQ(AbsenceGapLowerBound(g, 11).status, SolveStatus::kInfeasible);
}

TEST(AbsenceBoundTest, NeverAboveTheBruteForceOptimum) {
  int32_t binding = 0;  // cases where the bound says more than the sum of costs
  for (uint32_t seed = 0; seed < 12; ++seed) {
    const Graph g = seed % 2 == 0 ? testing::RandomTrainingGraph(seed, 2)
                                  : testing::RandomUnlabeledDag(seed, 6, 0.4);
    const auto outcomes = testing::AllSchedules(g);
    for (int64_t budget : Budgets(g, 8)) {
      SCOPED_TRACE(::testing::Message() << g.name() << " budget " << budget);
      const double oracle = testing::OracleCost(outcomes, budget);
      const AbsenceBound b = AbsenceGapLowerBound(g, budget);
      if (b.status == SolveStatus::kInfeasible) {
        EXPECT_TRUE(std::isinf(oracle)) << "bound claims infeasible, oracle found " << oracle;
        continue;
      }
      ASSERT_EQ(b.status, SolveStatus::kOptimal) << b.message;
      if (std::isinf(oracle)) continue;
      EXPECT_LE(b.cost, oracle + 1e-6);
      if (b.cost > g.total_cost() + 1e-6) ++binding;
    }
  }
  EXPECT_GT(binding, 0);  // the comparison covers bounds that actually charge recomputation
}

TEST(AbsenceBoundTest, NeverAboveTheMilpOptimum) {
  for (uint32_t seed = 0; seed < 6; ++seed) {
    const Graph g = seed % 2 == 0 ? testing::RandomTrainingGraph(seed, 5 + static_cast<int32_t>(seed))
                                  : testing::RandomUnlabeledDag(seed, 10 + 2 * static_cast<int32_t>(seed), 0.2);
    for (int64_t budget : Budgets(g, 4)) {
      SCOPED_TRACE(::testing::Message() << g.name() << " budget " << budget);
      const OptimizerResult opt = SolveOptimal(g, budget, {.mip = {.time_limit_s = 30}});
      const AbsenceBound b = AbsenceGapLowerBound(g, budget);
      if (opt.status == SolveStatus::kInfeasible) continue;
      if (b.status == SolveStatus::kInfeasible) {
        ADD_FAILURE() << "bound claims infeasible, MILP found " << SolveStatusName(opt.status);
        continue;
      }
      ASSERT_EQ(opt.status, SolveStatus::kOptimal) << opt.message;
      EXPECT_LE(b.cost, opt.schedule->cost + 1e-6);
      // The combined bound is no weaker than either part and still valid.
      const BestBound best = BestLowerBound(g, budget, {.time_limit_s = 30});
      EXPECT_GE(best.cost, b.cost - 1e-9);
      EXPECT_LE(best.cost, opt.schedule->cost + 1e-6);
    }
  }
}

TEST(AbsenceBoundTest, NeverAboveAnyStrategyOn200RandomGraphs) {
  for (uint32_t seed = 0; seed < 200; ++seed) {
    const Graph g = seed % 2 == 0 ? testing::RandomTrainingGraph(seed, 2 + static_cast<int32_t>(seed % 30))
                                  : testing::RandomUnlabeledDag(seed, 4 + static_cast<int32_t>(seed % 40), 0.15);
    const std::vector<int64_t> budgets = Budgets(g, 3);
    const int64_t budget = budgets[1];
    SCOPED_TRACE(::testing::Message() << g.name() << " budget " << budget);
    const AbsenceBound b = AbsenceGapLowerBound(g, budget);
    std::vector<StrategyResult> results = {Evict(g, budget)};
    for (const StrategySpec& spec : BaselineStrategies()) {
      if (spec.applies(g)) {
        results.push_back(spec.run(g, budget));
      }
    }
    for (const StrategyResult& r : results) {
      if (r.status != FitStatus::kFits) continue;
      ASSERT_NE(b.status, SolveStatus::kInfeasible) << r.strategy << " fits";
      EXPECT_LE(b.cost, r.cost + 1e-6) << r.strategy;
    }
  }
}

}  // namespace
}  // namespace remat
