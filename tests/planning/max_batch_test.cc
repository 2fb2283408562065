// The max-batch search against a brute-force oracle: a chain whose activations grow with the
// batch, where checkpoint-all's largest batch is found by trying every batch.
#include "planning/max_batch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/training_graph.h"
#include "planning/plan_report.h"

namespace remat {
namespace {

// A 6-layer chain whose outputs hold 100 bytes per sample; 5000 bytes of weights and 10 bytes
// of input per sample are fixed.
BatchGraph Chain(int64_t batch) {
  ForwardGraph forward{.name = "chain"};
  for (int32_t i = 0; i < 6; ++i) {
    forward.nodes.push_back({.name = "l" + std::to_string(i), .cost = 1.0 + i,
                             .bytes = 100 * batch});
    if (i > 0) forward.edges.push_back({i - 1, i});
  }
  forward.loss_bytes = 4 * batch;
  return {.graph = BuildTrainingGraph(forward), .fixed_bytes = 5000 + 10 * batch,
          .input_bytes = 10 * batch};
}

// The largest batch whose no-remat step fits `memory` with its fixed memory, by trying them all.
int64_t CheckpointAllOracle(int64_t memory, int64_t limit) {
  int64_t best = 0;
  for (int64_t b = 1; b <= limit; ++b) {
    const BatchGraph c = Chain(b);
    if (NoRemat(c.graph).peak_bytes + c.fixed_bytes <= memory) best = b;
  }
  return best;
}

TEST(MaxBatchTest, CheckpointAllMatchesTheOracleAndOptimalIsAtLeastAsLarge) {
  const int64_t memory = 60'000;
  std::vector<int64_t> built;
  MaxBatchSearch search(
      [&](int64_t batch) {
        built.push_back(batch);
        return Chain(batch);
      },
      {.memory_bytes = memory, .settings = {.time_limit_s = 20}, .max_batch = 512});
  const MaxBatchReport report = search.SearchAll({"checkpoint-all", "optimal"});
  ASSERT_EQ(report.results.size(), 2u);
  const int64_t oracle = CheckpointAllOracle(memory, 512);
  ASSERT_GT(oracle, 0);
  EXPECT_EQ(report.results[0].max_batch, oracle);
  EXPECT_EQ(report.reference_batch, oracle);
  EXPECT_TRUE(report.results[0].exact);
  EXPECT_GE(report.results[1].max_batch, oracle);
  EXPECT_EQ(*report.Ratio(report.results[0]), 1.0);
  // Each batch is built once, whatever the number of strategies probing it (batch 1 first).
  ASSERT_FALSE(built.empty());
  EXPECT_EQ(built.front(), 1);
  std::vector<int64_t> sorted = built;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  // The probe at max_batch fits: its peak and fixed memory are within the device.
  const StrategySearch& all = report.results[0];
  ASSERT_TRUE(all.at_max && all.at_max->peak_bytes);
  EXPECT_LE(*all.at_max->peak_bytes + all.at_max->fixed_bytes, memory);
  ASSERT_TRUE(all.next);
  EXPECT_EQ(all.next->batch, oracle + 1);
}

TEST(MaxBatchTest, WeightsThatFillTheDeviceFitNoBatch) {
  MaxBatchSearch search(Chain, {.memory_bytes = 5000, .max_batch = 64});
  const MaxBatchReport report = search.SearchAll({"checkpoint-all"});
  EXPECT_EQ(report.results[0].max_batch, 0);
  EXPECT_FALSE(report.any());
  ASSERT_FALSE(report.results[0].probes.empty());
  EXPECT_TRUE(report.results[0].probes[0].no_schedule_can_fit);
}

}  // namespace
}  // namespace remat
