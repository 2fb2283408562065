// The y range of an overhead plot: one far-off strategy (a 1.47x above a band of 1.0x-1.33x)
// must not squash the lines that matter, so values that a wide gap separates from the rest are
// clipped and marked instead of drawn.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace remat {

// The overheads (cost / no-remat cost) at one budget: the lower bound's and one entry per
// strategy, nullopt where there is none.
struct OverheadColumn {
  std::optional<double> bound;
  std::vector<std::optional<double>> strategies;
};

// A strategy's value above the axis.
struct ClippedValue {
  size_t budget = 0;    // index of the column
  size_t strategy = 0;  // index within the column
  double overhead = 0;
};

struct OverheadAxis {
  double low = 1;   // the smallest value drawn
  double high = 1;  // the top of the axis: the largest value kept, plus room for the marks
  std::vector<ClippedValue> above;  // in budget order, then strategy order
};

// The rule. Sort the distinct values (strategies and bounds) from the highest; two
// neighbouring values belong to one group unless the gap between them exceeds both kGapShare
// of the range spanned below it (down to the smallest value) and kMinGap. The top group is
// clipped, and then the next one, as long as the group lies wholly above the frontier: the
// largest of the budgets' best values. So a budget's best value is never clipped, and a steep
// trade-off curve is drawn whole.
// nullopt when nothing is clipped (gnuplot's autoscaling then draws every value) or when there
// is no value at all.
inline constexpr double kGapShare = 0.25;
inline constexpr double kMinGap = 0.1;
std::optional<OverheadAxis> ClipOverheadAxis(const std::vector<OverheadColumn>& columns);

}  // namespace remat
