// Budgets that property tests plan at.
#pragma once

#include <cstdint>
#include <limits>

#include "core/graph.h"
#include "strategies/checkpoint_all.h"

namespace remat::testing {

// Halfway between the minimum-peak bound and the no-remat peak: tight enough that strategies
// recompute, loose enough that they fit.
inline int64_t MiddleBudget(const Graph& g) {
  const int64_t peak = CheckpointAll(g, std::numeric_limits<int64_t>::max()).peak_bytes;
  return (MinimumPeakLowerBound(g) + peak) / 2;
}

}  // namespace remat::testing
