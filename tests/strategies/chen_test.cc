#include "strategies/chen.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/training_graph.h"
#include "strategies/checkpoint_all.h"

namespace remat {
namespace {

Graph Chain(std::vector<int64_t> bytes) {
  ForwardGraph forward;
  for (size_t i = 0; i < bytes.size(); ++i) {
    forward.nodes.push_back({.name = "n", .cost = 1, .bytes = bytes[i]});
    if (i > 0) forward.edges.push_back({static_cast<int32_t>(i - 1), static_cast<int32_t>(i)});
  }
  return BuildTrainingGraph(forward);
}

TEST(ChenGreedyTest, KeepsANodeOnceTheRunningTotalPassesTheSegmentBudget) {
  // Bytes 3, 3, 3, 3 with b = 5: totals 3, 6 (> 5: keep 1, restart), 3, 6 (keep 3).
  const Graph g = Chain({3, 3, 3, 3});
  const std::vector<bool> keep = ChenGreedyCheckpoints(g, 5, CandidateSet::kLinearized);
  EXPECT_EQ(std::vector<bool>(keep.begin(), keep.begin() + 4),
            (std::vector<bool>{false, true, false, true}));
  // b = 0 keeps every candidate; a huge b keeps none.
  const std::vector<bool> all = ChenGreedyCheckpoints(g, 0, CandidateSet::kLinearized);
  EXPECT_EQ(std::count(all.begin(), all.end(), true), 4);
  const std::vector<bool> none = ChenGreedyCheckpoints(g, 1e9, CandidateSet::kLinearized);
  EXPECT_EQ(std::count(none.begin(), none.end(), true), 0);
}

TEST(ChenGreedyTest, FitsWheneverSqrtNFitsAndIsNoMoreExpensive) {
  // The sweep includes b = 0 (keep every candidate, the cheapest schedule), so at the
  // checkpoint-all peak it returns cost equal to checkpoint-all's.
  const Graph g = Chain({5, 1, 8, 2, 9, 3, 7, 4, 6});
  const StrategyResult all = CheckpointAll(g, int64_t{1} << 40);
  const StrategyResult greedy = ChenGreedy(g, all.peak_bytes, CandidateSet::kLinearized);
  EXPECT_EQ(greedy.status, FitStatus::kFits);
  EXPECT_DOUBLE_EQ(greedy.cost, all.cost);
  const StrategyResult sqrtn = ChenSqrtN(g, all.peak_bytes, CandidateSet::kLinearized);
  const StrategyResult tight = ChenGreedy(g, sqrtn.peak_bytes, CandidateSet::kLinearized);
  EXPECT_EQ(tight.status, FitStatus::kFits);
}

TEST(ChenTest, RefusesUnlabeledGraphs) {
  const Graph g({{}, {}}, {{0, 1}});
  try {
    ChenSqrtN(g, 10, CandidateSet::kLinearized);
    FAIL();
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("chen-sqrtn-linear needs a training graph"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace remat
