#include "core/recompute.h"

#include <gtest/gtest.h>

#include <limits>

#include "core/simulator.h"
#include "testing/random_graphs.h"

namespace remat {
namespace {

TEST(ScheduleFromCheckpointsTest, DiamondWithNothingHeldRecomputesEverything) {
  // 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3 and S = 0: every stage recomputes all ancestors.
  const Graph g({{}, {}, {}, {}}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  const Schedule s = ScheduleFromCheckpoints(g, StageMatrix(4, 4));
  EXPECT_EQ(s.R.RowOnes(0), (std::vector<int32_t>{0}));
  EXPECT_EQ(s.R.RowOnes(1), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(s.R.RowOnes(2), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(s.R.RowOnes(3), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_TRUE(CheckSchedule(g, s).empty());
}

TEST(ScheduleFromCheckpointsTest, ComputesAValueTheNextStageStartsHolding) {
  // Chain 0 -> 1 -> 2 -> 3; S[3][0] = 1 without S[2][0]: stage 2 must recompute 0.
  const Graph g({{}, {}, {}, {}}, {{0, 1}, {1, 2}, {2, 3}});
  StageMatrix S(4, 4);
  S.Set(1, 0);
  S.Set(2, 1);
  S.Set(3, 2);
  S.Set(3, 0);
  const Schedule s = ScheduleFromCheckpoints(g, S);
  EXPECT_EQ(s.R.RowOnes(2), (std::vector<int32_t>{0, 2}));
  EXPECT_TRUE(CheckSchedule(g, s).empty());
}

// Brute-force oracle: for every S of a 4-node DAG, the cheapest R that makes (R, S) valid
// costs exactly what the R-from-S rule gives.
TEST(ScheduleFromCheckpointsTest, IsTheCheapestRForEverySOnTinyDags) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    const Graph g = testing::RandomUnlabeledDag(seed, 4, 0.5);
    std::vector<std::pair<int, int>> lower;  // (t, i) with i < t: the free cells
    for (int t = 0; t < 4; ++t) {
      for (int i = 0; i < t; ++i) lower.emplace_back(t, i);
    }
    const int cells = static_cast<int>(lower.size());  // 6
    for (int s_bits = 0; s_bits < (1 << cells); ++s_bits) {
      StageMatrix S(4, 4);
      for (int k = 0; k < cells; ++k) {
        if (s_bits >> k & 1) S.Set(lower[k].first, lower[k].second);
      }
      double best = std::numeric_limits<double>::infinity();
      for (int r_bits = 0; r_bits < (1 << cells); ++r_bits) {
        Schedule candidate{StageMatrix(4, 4), S};
        for (int t = 0; t < 4; ++t) candidate.R.Set(t, t);
        double cost = 0;
        for (int k = 0; k < cells; ++k) {
          if (r_bits >> k & 1) candidate.R.Set(lower[k].first, lower[k].second);
        }
        if (!CheckSchedule(g, candidate).empty()) continue;
        for (int t = 0; t < 4; ++t) {
          for (int i : candidate.R.RowOnes(t)) cost += g.node(i).cost;
        }
        best = std::min(best, cost);
      }
      const Schedule rule = ScheduleFromCheckpoints(g, S);
      ASSERT_TRUE(CheckSchedule(g, rule).empty()) << "S bits " << s_bits;
      EXPECT_DOUBLE_EQ(Simulate(g, rule).cost, best) << "S bits " << s_bits;
    }
  }
}

}  // namespace
}  // namespace remat
