// The gap rule of overhead plots.
#include "cli/overhead_axis.h"

#include <algorithm>
#include <functional>

namespace remat {
namespace {

// Values closer than this are one level: sums of doubles that should be equal.
constexpr double kSameValue = 1e-9;
// Room above the highest value kept for the arrows and labels at the top edge.
constexpr double kMarkRoom = 0.15;

}  // namespace

std::optional<OverheadAxis> ClipOverheadAxis(const std::vector<OverheadColumn>& columns) {
  std::vector<double> values;  // strategies and bounds
  double frontier = 0;         // the largest of the budgets' best values: never clipped
  for (const OverheadColumn& column : columns) {
    if (column.bound) values.push_back(*column.bound);
    std::optional<double> best;
    for (const auto& value : column.strategies) {
      if (!value) continue;
      values.push_back(*value);
      best = best ? std::min(*best, *value) : *value;
    }
    if (best) frontier = std::max(frontier, *best);
  }
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end(), std::greater<>());
  std::vector<double> levels;  // distinct values, highest first
  for (double value : values) {
    if (levels.empty() || levels.back() - value > kSameValue) levels.push_back(value);
  }
  const double low = levels.back();
  // Two neighbouring levels belong together unless a wide gap separates them.
  auto wide_gap_below = [&](size_t i) {
    return levels[i] - levels[i + 1] > std::max(kGapShare * (levels[i + 1] - low), kMinGap);
  };
  // Peel groups of levels off the top while a wide gap lies below each; `kept` is the highest
  // level left.
  size_t kept = 0;
  while (levels[kept] > frontier + kSameValue) {
    size_t end = kept;  // the lowest level of the group that starts at `kept`
    while (end + 1 < levels.size() && !wide_gap_below(end)) ++end;
    if (end + 1 == levels.size() || levels[end] <= frontier + kSameValue) break;
    kept = end + 1;
  }
  if (kept == 0) return std::nullopt;
  const double top_kept = levels[kept];
  OverheadAxis axis{.low = low,
                    .high = top_kept + kMarkRoom * std::max(top_kept - low, kMinGap)};
  for (size_t b = 0; b < columns.size(); ++b) {
    for (size_t s = 0; s < columns[b].strategies.size(); ++s) {
      const auto& value = columns[b].strategies[s];
      if (value && *value > top_kept + kSameValue) axis.above.push_back({b, s, *value});
    }
  }
  return axis;
}

}  // namespace remat
