// Griewank's binomial checkpointing ("revolve") for the linearized forward chain.
#pragma once

#include <cstdint>
#include <vector>

#include "core/evaluated_schedule.h"
#include "core/graph.h"

namespace remat {

// Forward advances needed by binomial checkpointing, from the recurrence of Griewank (1992):
// providing the l values above a stored state with c free slots costs
//   T(l, 0) = l(l+1)/2,  T(0, c) = 0,
//   T(l, c) = min over 1 <= j <= l of  j + T(l-j, c-1) + T(j-1, c)
// (advance j steps and store that state, reverse the part above it with one slot fewer, then
// the part below it with the slot back). First(l, c) is the same for the first forward sweep,
// whose advances are the forward pass itself and cost nothing extra.
class BinomialTable {
 public:
  BinomialTable(int32_t max_steps, int32_t max_slots);
  int64_t Advances(int32_t steps, int32_t slots) const { return advances_[At(steps, slots)]; }
  int64_t FirstSweepRecomputations(int32_t steps, int32_t slots) const {
    return first_[At(steps, slots)];
  }
  // The optimal j (largest among ties) for each table.
  int32_t Split(int32_t steps, int32_t slots) const { return split_[At(steps, slots)]; }
  int32_t FirstSweepSplit(int32_t steps, int32_t slots) const {
    return first_split_[At(steps, slots)];
  }

 private:
  size_t At(int32_t steps, int32_t slots) const {
    return static_cast<size_t>(steps) * (max_slots_ + 1) + slots;
  }
  int32_t max_slots_;
  std::vector<int64_t> advances_, first_;
  std::vector<int32_t> split_, first_split_;
};

// The same numbers and splits without a table, in O(r) per value (r: the number of times a
// step is advanced, about l^(1/c)): the slope of T(., c) at l is the least r >= 1 with
// C(r + c + 1, c + 1) >= l + 1, First(l, c) = T(l + 1, c) - 1 - l, and both minimands are
// convex in j, so the largest optimal j is found by bisection. Equal to BinomialTable on
// every entry (tests/strategies/griewank_test.cc); what Griewank uses at any size.
class BinomialCounts {
 public:
  int64_t Advances(int32_t steps, int32_t slots) const;
  int64_t FirstSweepRecomputations(int32_t steps, int32_t slots) const;
  int32_t Split(int32_t steps, int32_t slots) const;
  int32_t FirstSweepSplit(int32_t steps, int32_t slots) const;
};

// The binomial schedule with `slots` checkpoint slots over the forward nodes in topological
// order; the R-from-S rule fills in recomputation (and handles non-chain edges correctly).
StrategyResult GriewankWithSlots(const Graph& graph, int64_t budget_bytes, int32_t slots);

// slots = ceil(log2(f)) for f forward nodes: the classic O(log n) memory variant.
StrategyResult GriewankLogN(const Graph& graph, int64_t budget_bytes);

// Sweeps the slot count (0 to min(f, 64)) and returns the cheapest
// schedule that fits the budget, or the lowest peak when none fits.
StrategyResult Griewank(const Graph& graph, int64_t budget_bytes);

}  // namespace remat
