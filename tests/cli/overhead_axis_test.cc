// The y range of overhead plots: values a wide gap separates from the rest are clipped.
#include "cli/overhead_axis.h"

#include <gtest/gtest.h>

namespace remat {
namespace {

TEST(OverheadAxisTest, AnOutlierAboveTheRestIsClipped) {
  // The highest value 1.47 lies 0.27 above the next one, 1.20; the rest spans 1.0 .. 1.20, so
  // the gap exceeds both a quarter of that (0.05) and 0.1: 1.47 is clipped. The next gap,
  // 1.20 - 1.15 = 0.05, is too small to clip more. The axis ends 15% of the kept range (0.2)
  // above 1.20.
  const std::vector<OverheadColumn> columns = {
      {.bound = 1.10, .strategies = {1.20, 1.15, 1.47}},
      {.bound = 1.05, .strategies = {1.10, 1.10, 1.12}},
      {.bound = 1.00, .strategies = {1.00, 1.00, 1.00}},
  };
  const auto axis = ClipOverheadAxis(columns);
  ASSERT_TRUE(axis.has_value());
  EXPECT_DOUBLE_EQ(axis->low, 1.0);
  EXPECT_NEAR(axis->high, 1.23, 1e-12);
  ASSERT_EQ(axis->above.size(), 1u);
  EXPECT_EQ(axis->above[0].budget, 0u);
  EXPECT_EQ(axis->above[0].strategy, 2u);
  EXPECT_DOUBLE_EQ(axis->above[0].overhead, 1.47);
}

TEST(OverheadAxisTest, TheUnetSweepLosesOnlyItsFlatOutlier) {
  // `remat sweep --model unet --points 6` at four of its budgets, strategies chen-sqrtn-ap,
  // chen-sqrtn-linear, chen-greedy-ap, chen-greedy-linear, griewank-logn, griewank,
  // local-search, optimal. The best values reach 1.05 (frontier). 1.475 lies 0.142 above 1.333,
  // more than max(0.25 * 0.333, 0.1); below 1.333 no gap exceeds its threshold (the widest,
  // 1.165 - 1.083 = 0.082, is under 0.1) until the frontier. So griewank-logn's 1.475 at every
  // budget and griewank's at the tightest are clipped, and the axis ends at 1.333 + 15% of 0.333.
  const std::optional<double> n;
  const std::vector<OverheadColumn> columns = {
      {.bound = 1.012, .strategies = {n, n, n, 1.268, 1.475, 1.475, 1.050, 1.050}},
      {.bound = 1.009, .strategies = {n, 1.333, 1.329, 1.221, 1.475, 1.083, 1.051, 1.051}},
      {.bound = 1.003, .strategies = {1.308, 1.333, 1.266, 1.165, 1.475, 1.033, 1.033, 1.033}},
      {.bound = 1.000, .strategies = {1.308, 1.333, 1.266, 1.000, 1.475, 1.000, 1.000, 1.000}},
  };
  const auto axis = ClipOverheadAxis(columns);
  ASSERT_TRUE(axis.has_value());
  EXPECT_NEAR(axis->high, 1.333 + 0.15 * 0.333, 1e-12);
  ASSERT_EQ(axis->above.size(), 5u);
  EXPECT_EQ(axis->above[0].budget, 0u);
  EXPECT_EQ(axis->above[0].strategy, 4u);
  EXPECT_EQ(axis->above[1].budget, 0u);
  EXPECT_EQ(axis->above[1].strategy, 5u);
  for (size_t k = 2; k < 5; ++k) {
    EXPECT_EQ(axis->above[k].budget, k - 1);
    EXPECT_EQ(axis->above[k].strategy, 4u);
  }
}

TEST(OverheadAxisTest, AGroupAboveAWideGapIsClippedWhole) {
  // 1.47 and 1.45 are 0.02 apart, one group; 0.25 below it lies 1.20, a wide gap: both go.
  // Below, 1.20, 1.15, 1.06 and 1.0 are at most 0.09 apart: one group down to the frontier.
  const std::vector<OverheadColumn> columns = {
      {.bound = 1.06, .strategies = {1.20, 1.47, 1.0}},
      {.bound = 1.0, .strategies = {1.15, 1.45, 1.0}},
  };
  const auto axis = ClipOverheadAxis(columns);
  ASSERT_TRUE(axis.has_value());
  EXPECT_EQ(axis->above.size(), 2u);
}

TEST(OverheadAxisTest, ATradeOffCurveIsDrawnWhole) {
  // At the tightest budget only one strategy fits, at 2.6x, far above everything else: it is
  // the best there, so neither it nor anything below it is clipped.
  const std::vector<OverheadColumn> columns = {
      {.bound = 2.5, .strategies = {2.6, std::nullopt, std::nullopt}},
      {.bound = 1.3, .strategies = {1.4, 1.5, 1.45}},
      {.bound = 1.0, .strategies = {1.0, 1.0, 1.0}},
  };
  EXPECT_FALSE(ClipOverheadAxis(columns).has_value());
}

TEST(OverheadAxisTest, ASmallStepAboveAFlatBandIsKept) {
  // Everything at 1.0x but a 1.08x and a 1.47x: 1.47 is 0.39 above 1.08 and clipped; 1.08 is
  // only 0.08 above 1.0, under the 0.1 a gap must exceed, and kept.
  const std::vector<OverheadColumn> columns = {
      {.bound = std::nullopt, .strategies = {1.0, 1.0, 1.08, 1.47}},
      {.bound = std::nullopt, .strategies = {1.0, 1.0, 1.0, 1.0}},
  };
  const auto axis = ClipOverheadAxis(columns);
  ASSERT_TRUE(axis.has_value());
  EXPECT_NEAR(axis->high, 1.08 + 0.15 * 0.1, 1e-12);
  ASSERT_EQ(axis->above.size(), 1u);
  EXPECT_EQ(axis->above[0].strategy, 3u);
}

TEST(OverheadAxisTest, NoValueLeavesTheAxisToTheCaller) {
  EXPECT_FALSE(ClipOverheadAxis({}).has_value());
  EXPECT_FALSE(ClipOverheadAxis({{.bound = std::nullopt, .strategies = {std::nullopt}}}));
}

}  // namespace
}  // namespace remat
