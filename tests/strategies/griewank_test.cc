#include "strategies/griewank.h"

#include <gtest/gtest.h>

#include "core/training_graph.h"
#include "strategies/checkpoint_all.h"

namespace remat {
namespace {

constexpr int64_t kNoLimit = int64_t{1} << 60;

TEST(BinomialTableTest, SmallValuesByHand) {
  const BinomialTable table(6, 3);
  // No slot: providing l values costs 1 + 2 + ... + l advances.
  EXPECT_EQ(table.Advances(4, 0), 10);
  // One value always costs one advance.
  EXPECT_EQ(table.Advances(1, 2), 1);
  // l = 2, c = 1: advance 1 step and store it (1), the value above costs 1 more (1): 2.
  EXPECT_EQ(table.Advances(2, 1), 2);
  // l = 3, c = 1: store at 2 (2 advances), value 3 from it (1), value 1 from x_a (1): 4.
  EXPECT_EQ(table.Advances(3, 1), 4);
  // With at least l slots every value is stored on the way: l advances.
  EXPECT_EQ(table.Advances(3, 3), 3);
  // First sweep: the forward pass stores slots for free; with enough slots nothing reruns.
  EXPECT_EQ(table.FirstSweepRecomputations(3, 3), 0);
  // First sweep, l = 3, c = 1: keeping value 2 (or 3) leaves two values at one advance each.
  EXPECT_EQ(table.FirstSweepRecomputations(3, 1), 2);
}

TEST(BinomialTableTest, MoreSlotsNeverCostMore) {
  const BinomialTable table(40, 8);
  for (int32_t l = 0; l <= 40; ++l) {
    for (int32_t c = 1; c <= 8; ++c) {
      EXPECT_LE(table.Advances(l, c), table.Advances(l, c - 1)) << l << " " << c;
      EXPECT_LE(table.FirstSweepRecomputations(l, c), table.FirstSweepRecomputations(l, c - 1));
    }
  }
}

// The closed form against the recurrence: every value and every split (ties included).
TEST(BinomialCountsTest, EqualsTheRecurrenceOnEveryEntry) {
  const int32_t max_steps = 150, max_slots = 12;
  const BinomialTable table(max_steps, max_slots);
  const BinomialCounts counts;
  for (int32_t l = 0; l <= max_steps; ++l) {
    for (int32_t c = 0; c <= max_slots; ++c) {
      SCOPED_TRACE(::testing::Message() << "l=" << l << " c=" << c);
      ASSERT_EQ(counts.Advances(l, c), table.Advances(l, c));
      ASSERT_EQ(counts.FirstSweepRecomputations(l, c), table.FirstSweepRecomputations(l, c));
      if (l >= 1 && c >= 1) {
        ASSERT_EQ(counts.Split(l, c), table.Split(l, c));
        ASSERT_EQ(counts.FirstSweepSplit(l, c), table.FirstSweepSplit(l, c));
      }
    }
  }
}

TEST(GriewankTest, SimulatedRecomputationsMatchTheBinomialModelOnLinearGraphs) {
  // In linear(n) the backward node of position p reads only x_p, so the simulator's extra
  // evaluations must equal the model's forward recomputations exactly.
  for (int32_t n : {1, 2, 5, 8, 13, 30}) {
    const Graph g = LinearGraph(n);
    const BinomialTable table(n, n);
    for (int32_t slots = 0; slots <= n; ++slots) {
      SCOPED_TRACE(::testing::Message() << "n=" << n << " slots=" << slots);
      const StrategyResult r = GriewankWithSlots(g, kNoLimit, slots);
      EXPECT_DOUBLE_EQ(r.cost - g.total_cost(),
                       static_cast<double>(table.FirstSweepRecomputations(n, slots)));
    }
  }
}

TEST(GriewankTest, LogNSlotsOnLinear8) {
  // ceil(log2 8) = 3 slots. Peak never exceeds checkpoint-all's.
  const Graph g = LinearGraph(8);
  const StrategyResult r = GriewankLogN(g, kNoLimit);
  EXPECT_NE(r.parameters.find("3 slots"), std::string::npos);
  EXPECT_LE(r.peak_bytes, CheckpointAll(g, kNoLimit).peak_bytes);
}

TEST(GriewankTest, SweepReturnsTheCheapestFittingSlotCount) {
  const Graph g = LinearGraph(16);
  for (int64_t budget = 4; budget <= 18; ++budget) {
    SCOPED_TRACE(budget);
    const StrategyResult best = Griewank(g, budget);
    for (int32_t slots = 0; slots <= 16; ++slots) {
      const StrategyResult r = GriewankWithSlots(g, budget, slots);
      if (r.status == FitStatus::kFits) {
        ASSERT_EQ(best.status, FitStatus::kFits);
        EXPECT_LE(best.cost, r.cost);
      }
    }
  }
}

}  // namespace
}  // namespace remat
