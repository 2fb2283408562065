// CompareCosts on hand-computed cases.
#include "exec/cost_comparison.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/errors.h"

namespace remat {
namespace {

TEST(CostComparisonTest, HandComputedCase) {
  // Totals 6 and 13: rate 13/6, predictions 13/6, 13/3, 6.5 and 0.
  const CostComparison c = CompareCosts({1, 2, 3, 0}, {2, 4, 6, 1}, 3);
  EXPECT_EQ(c.nodes, 4);
  EXPECT_DOUBLE_EQ(c.rate, 13.0 / 6.0);
  // Deviations from the means 1.5 and 3.25: sxy 8.5, sxx 5, syy 14.75.
  EXPECT_NEAR(c.pearson, 8.5 / std::sqrt(5 * 14.75), 1e-12);
  EXPECT_DOUBLE_EQ(c.spearman, 1.0);  // the same order
  // Relative errors 1/12, 1/12, 1/12 and 1 (the zero-cost node is predicted 0).
  EXPECT_NEAR(c.median_relative_error, 1.0 / 12.0, 1e-12);
  EXPECT_DOUBLE_EQ(c.within_factor_2, 0.75);
  EXPECT_EQ(c.zero_cost_nodes, 1);
  EXPECT_DOUBLE_EQ(c.zero_cost_measured_share, 1.0 / 13.0);
  // Absolute errors 1/6, 1/3, 1/2, 1: the three largest, largest first.
  ASSERT_EQ(c.worst.size(), 3u);
  EXPECT_EQ(c.worst[0].id, 3);
  EXPECT_EQ(c.worst[1].id, 2);
  EXPECT_EQ(c.worst[2].id, 1);
  EXPECT_DOUBLE_EQ(c.worst[1].predicted, 6.5);
  EXPECT_DOUBLE_EQ(c.worst[1].measured, 6.0);
}

TEST(CostComparisonTest, ProportionalCostsArePredictedExactly) {
  const CostComparison c = CompareCosts({10, 20, 40}, {0.5, 1, 2});
  EXPECT_DOUBLE_EQ(c.rate, 0.05);
  EXPECT_NEAR(c.pearson, 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(c.spearman, 1.0);
  EXPECT_NEAR(c.median_relative_error, 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(c.within_factor_2, 1.0);
  EXPECT_EQ(c.zero_cost_nodes, 0);
}

TEST(CostComparisonTest, TiesShareTheirMeanRank) {
  // Model ranks 1.5, 1.5, 3 and measured ranks 3, 1, 2 are uncorrelated.
  EXPECT_NEAR(CompareCosts({1, 1, 2}, {3, 1, 2}).spearman, 0.0, 1e-12);
  // Reversed order: -1.
  EXPECT_NEAR(CompareCosts({1, 2, 3}, {3, 2, 1}).spearman, -1.0, 1e-12);
}

TEST(CostComparisonTest, MedianOfOddEvenAndNoValues) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({}), 0.0);
}

TEST(CostComparisonTest, MismatchedNegativeOrAllZeroCostsAreRejected) {
  EXPECT_THROW(CompareCosts({1, 2}, {1}), InputError);
  EXPECT_THROW(CompareCosts({}, {}), InputError);
  EXPECT_THROW(CompareCosts({1, -2}, {1, 1}), InputError);
  EXPECT_THROW(CompareCosts({0, 0}, {1, 1}), InputError);
  EXPECT_THROW(CompareCosts({1, 1}, {0, 0}), InputError);
}

}  // namespace
}  // namespace remat
