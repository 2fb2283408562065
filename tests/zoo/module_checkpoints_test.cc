// checkpoint-blocks and selective: their checkpoint sets on a hand-checkable graph and on the
// zoo's transformer, and what their schedules cost.
#include "strategies/module_checkpoints.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/errors.h"
#include "core/schedule.h"
#include "core/training_graph.h"
#include "strategies/checkpoint_all.h"
#include "strategies/checkpoints.h"
#include "strategies/registry.h"
#include "zoo/registry.h"

namespace remat {
namespace {

// e -> [a0 a1 a2] -> [c0 c1 c2] -> head, blocks b0 and b1, with a1 also read by c1 (an
// interior value that crosses into the next block). Costs are powers of two, so every
// subset's sum is distinct.
Graph TwoBlocks(bool contractions) {
  ForwardGraph forward{.name = "two-blocks"};
  const std::vector<std::string> names = {"e", "a0", "a1", "a2", "c0", "c1", "c2", "head"};
  const std::vector<std::string> blocks = {"", "b0", "b0", "b0", "b1", "b1", "b1", ""};
  for (size_t i = 0; i < names.size(); ++i) {
    forward.nodes.push_back({.name = names[i],
                             .cost = static_cast<double>(1 << i),
                             .bytes = 100,
                             .block = blocks[i],
                             .contraction = contractions && (names[i] == "a1" ||
                                                             names[i] == "c1")});
  }
  for (int32_t i = 0; i + 1 < 8; ++i) forward.edges.push_back({i, i + 1});
  forward.edges.push_back({2, 5});
  return BuildTrainingGraph(forward);
}

std::vector<std::string> KeptNames(const Graph& graph, const std::vector<bool>& keep) {
  std::vector<std::string> kept;
  for (int32_t v : graph.forward_nodes()) {
    if (keep[v]) kept.push_back(graph.node(v).name);
  }
  return kept;
}

// Forward cost of the forward nodes that are not kept: each is recomputed once.
double RecomputedCost(const Graph& graph, const std::vector<bool>& keep) {
  double cost = 0;
  for (int32_t v : graph.forward_nodes()) cost += keep[v] ? 0 : graph.node(v).cost;
  return cost;
}

TEST(ModuleCheckpointsTest, BlocksKeepWhatCrossesTheirBoundary) {
  const Graph graph = TwoBlocks(false);
  const std::vector<bool> keep = BlockCheckpoints(graph);
  EXPECT_EQ(KeptNames(graph, keep),
            (std::vector<std::string>{"e", "a1", "a2", "c2", "head"}));
  const StrategyResult result = CheckpointBlocks(graph, int64_t{1} << 40);
  EXPECT_TRUE(CheckSchedule(graph, result.schedule).empty());
  // a0, then c0 and c1, are recomputed once each: 2 + 16 + 32 more than every node once.
  EXPECT_DOUBLE_EQ(result.cost, graph.total_cost() + 2 + 16 + 32);
  EXPECT_EQ(result.parameters, "2 blocks recomputed inside; 5 values kept");
}

// Block b = a0 .. a4, with a1 read by the head (so kept) and a3 reading a0. a3's gradient
// comes before a0's in backward and recomputing a3 needs a0: recomputed as runs of
// consecutive nodes ({a0}, then {a2, a3}), a0 would run once for a3 and again for its own
// gradient. The block is one segment: each of its values is recomputed once.
TEST(ModuleCheckpointsTest, ABlockSplitByAKeptValueIsRecomputedOnce) {
  ForwardGraph forward{.name = "split-block"};
  const std::vector<std::string> names = {"e", "a0", "a1", "a2", "a3", "a4", "head"};
  for (size_t i = 0; i < names.size(); ++i) {
    forward.nodes.push_back({.name = names[i],
                             .cost = static_cast<double>(1 << i),
                             .bytes = 100,
                             .block = i == 0 || i == 6 ? "" : "b"});
  }
  for (int32_t i = 0; i + 1 < 7; ++i) forward.edges.push_back({i, i + 1});
  forward.edges.push_back({2, 6});  // a1 -> head
  forward.edges.push_back({1, 4});  // a0 -> a3
  const Graph graph = BuildTrainingGraph(forward);
  const std::vector<bool> keep = BlockCheckpoints(graph);
  EXPECT_EQ(KeptNames(graph, keep), (std::vector<std::string>{"e", "a1", "a4", "head"}));
  const StrategyResult result = CheckpointBlocks(graph, int64_t{1} << 40);
  EXPECT_TRUE(CheckSchedule(graph, result.schedule).empty());
  EXPECT_DOUBLE_EQ(result.cost, graph.total_cost() + 2 + 8 + 16);  // a0, a2, a3 once each
  // Runs of consecutive nodes as segments recompute a0 twice.
  const StrategyResult runs =
      EvaluateSchedule(graph, "runs", ScheduleKeeping(graph, keep), int64_t{1} << 40, "");
  EXPECT_DOUBLE_EQ(runs.cost, graph.total_cost() + 2 + 2 + 8 + 16);
}

// A captured graph's backward need not read a block's input: here only a0 reads e. The kept
// e stays until block b is recomputed (stage 7, for a0's gradient), so only a0 runs again.
TEST(ModuleCheckpointsTest, AKeptInputStaysUntilItsBlockIsRecomputed) {
  std::vector<Node> nodes = {
      {.name = "e", .kind = NodeKind::kForward, .cost = 1, .bytes = 10},
      {.name = "a0", .kind = NodeKind::kForward, .cost = 2, .bytes = 10, .block = "b"},
      {.name = "a1", .kind = NodeKind::kForward, .cost = 4, .bytes = 10, .block = "b"},
      {.name = "head", .kind = NodeKind::kForward, .cost = 8, .bytes = 10},
      {.name = "loss", .kind = NodeKind::kLoss, .cost = 0, .bytes = 1},
      {.name = "g_head", .kind = NodeKind::kBackward, .cost = 16, .bytes = 10},
      {.name = "g_a1", .kind = NodeKind::kBackward, .cost = 32, .bytes = 10},
      {.name = "g_a0", .kind = NodeKind::kBackward, .cost = 64, .bytes = 10}};
  const Graph graph(nodes, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {3, 5}, {4, 5}, {2, 6}, {5, 6},
                            {1, 7}, {6, 7}});
  EXPECT_EQ(KeptNames(graph, BlockCheckpoints(graph)),
            (std::vector<std::string>{"e", "a1", "head"}));
  const StrategyResult result = CheckpointBlocks(graph, int64_t{1} << 40);
  EXPECT_TRUE(CheckSchedule(graph, result.schedule).empty());
  EXPECT_DOUBLE_EQ(result.cost, graph.total_cost() + 2);  // a0 again, e not
}

TEST(ModuleCheckpointsTest, SelectiveKeepsContractionsAndWhatCrossesBlocks) {
  const Graph graph = TwoBlocks(true);
  const std::vector<bool> keep = SelectiveCheckpoints(graph);
  EXPECT_EQ(KeptNames(graph, keep),
            (std::vector<std::string>{"e", "a1", "a2", "c1", "c2", "head"}));
  const StrategyResult result = SelectiveRecompute(graph, int64_t{1} << 40);
  EXPECT_TRUE(CheckSchedule(graph, result.schedule).empty());
  EXPECT_DOUBLE_EQ(result.cost, graph.total_cost() + 2 + 16);  // a0 and c0, once each
  // Without blocks, the contractions alone.
  std::vector<Node> nodes = graph.nodes();
  for (Node& node : nodes) node.block.clear();
  const Graph flat(nodes, graph.edges(), graph.cost_unit());
  const std::vector<bool> flat_keep = SelectiveCheckpoints(flat);
  EXPECT_EQ(KeptNames(flat, flat_keep), (std::vector<std::string>{"a1", "c1"}));
  const StrategyResult flat_result = SelectiveRecompute(flat, int64_t{1} << 40);
  EXPECT_TRUE(CheckSchedule(flat, flat_result.schedule).empty());
  EXPECT_DOUBLE_EQ(flat_result.cost, flat.total_cost() + 1 + 2 + 8 + 16 + 64 + 128);
}

// TwoBlocks with the first N of its 2 blocks checkpointed: N = 0 keeps everything (no
// recomputation) or recomputes selectively (a0 and c0, as `selective`); N = 1 recomputes a0
// inside b0 and keeps b1 whole or recomputes c0 there; N = 2 is checkpoint-blocks.
TEST(ModuleCheckpointsTest, FirstBlocksCheckpointedAndTheRestKeptOrSelective) {
  const Graph graph = TwoBlocks(true);
  const double total = graph.total_cost();
  const double expected[2][3] = {{total, total + 2, total + 2 + 16 + 32},
                                 {total + 2 + 16, total + 2 + 16, total + 2 + 16 + 32}};
  for (bool selective : {false, true}) {
    for (size_t n = 0; n <= 2; ++n) {
      SCOPED_TRACE(::testing::Message() << "selective " << selective << ", N " << n);
      const Schedule schedule = FirstBlocksSchedule(graph, n, selective);
      EXPECT_TRUE(CheckSchedule(graph, schedule).empty());
      EXPECT_DOUBLE_EQ(EvaluateSchedule(graph, "", schedule, 0, "").cost, expected[selective][n]);
    }
    EXPECT_THROW(FirstBlocksSchedule(graph, 3, selective), InternalError);
  }
  EXPECT_TRUE(FirstBlocksSchedule(graph, 2, false) == CheckpointBlocks(graph, 0).schedule);
}

// The strategies take the fewest first blocks whose schedule fits: at every budget between
// the least and the largest peak of N = 0, 1, 2, the smallest fitting N.
TEST(ModuleCheckpointsTest, FirstBlocksTakesTheFewestThatFit) {
  const Graph graph = TwoBlocks(true);
  for (bool selective : {false, true}) {
    std::vector<int64_t> peaks;
    for (size_t n = 0; n <= 2; ++n) {
      peaks.push_back(
          EvaluateSchedule(graph, "", FirstBlocksSchedule(graph, n, selective), 0, "").peak_bytes);
    }
    for (int64_t budget = 0; budget <= peaks[0] + 100; budget += 50) {
      const StrategyResult result = selective ? SelectiveAfterFirstBlocks(graph, budget)
                                              : CheckpointFirstBlocks(graph, budget);
      size_t fewest = 3;
      for (size_t n = 0; n <= 2 && fewest == 3; ++n) {
        if (peaks[n] <= budget) fewest = n;
      }
      SCOPED_TRACE(::testing::Message() << "selective " << selective << ", budget " << budget);
      const size_t n = fewest == 3 ? 2 : fewest;  // nothing fits: all blocks, over budget
      EXPECT_EQ(result.status == FitStatus::kFits, fewest < 3);
      EXPECT_EQ(result.peak_bytes, peaks[n]);
      EXPECT_NE(result.parameters.find(fmt::format("first {} of 2 blocks", n)), std::string::npos)
          << result.parameters;
    }
  }
}

// TwoBlocks' contractions a1 and c1: a1 crosses into b1 (c1 reads it), so it is kept as a
// boundary; c1 (cost 32, 100 B) is the one to drop. Dropping it recomputes c1 for its
// gradient: 32 more than `selective`.
TEST(ModuleCheckpointsTest, SelectiveFitDropsContractionsCheapestPerByteFirst) {
  const Graph graph = TwoBlocks(true);
  const std::vector<int32_t> order = ContractionsToDrop(graph);
  ASSERT_EQ(order.size(), 1u);
  EXPECT_EQ(graph.node(order[0]).name, "c1");
  const double selective = SelectiveRecompute(graph, 0).cost;
  EXPECT_DOUBLE_EQ(EvaluateSchedule(graph, "", SelectiveDropping(graph, order, 1), 0, "").cost,
                   selective + 32);
  EXPECT_THROW(SelectiveDropping(graph, order, 2), InternalError);
  // With the last block (b1) kept whole, c0 and c1 are not recomputed: only a0 is (2).
  EXPECT_DOUBLE_EQ(
      EvaluateSchedule(graph, "", SelectiveDropping(graph, order, 0, true), 0, "").cost,
      graph.total_cost() + 2);
  // At the budget of either schedule, the fewest drops that fit.
  for (size_t dropped : {0u, 1u}) {
    const int64_t peak =
        EvaluateSchedule(graph, "", SelectiveDropping(graph, order, dropped), 0, "").peak_bytes;
    const StrategyResult result = SelectiveFit(graph, peak);
    EXPECT_EQ(result.status, FitStatus::kFits);
    EXPECT_LE(result.cost, selective + 32 * dropped);
  }
}

// Four contractions in a row with costs 6, 2, 8 and 4 per 2, 1, 8 and 4 bytes (3, 2, 1 and 1
// per byte): dropped m2 and m3 (equal ratios, by node id), then m1, then m0.
TEST(ModuleCheckpointsTest, ContractionsToDropByCostPerByte) {
  ForwardGraph forward{.name = "ratios"};
  const std::vector<std::pair<double, int64_t>> nodes = {{6, 2}, {2, 1}, {8, 8}, {4, 4}};
  for (size_t i = 0; i < nodes.size(); ++i) {
    forward.nodes.push_back({.name = fmt::format("m{}", i), .cost = nodes[i].first,
                             .bytes = nodes[i].second, .contraction = true});
    if (i > 0) forward.edges.push_back({static_cast<int32_t>(i - 1), static_cast<int32_t>(i)});
  }
  const Graph graph = BuildTrainingGraph(forward);
  EXPECT_EQ(ContractionsToDrop(graph), (std::vector<int32_t>{2, 3, 1, 0}));
}

TEST(ModuleCheckpointsTest, GraphsWithoutTheStructureAreRefusedByName) {
  const Graph graph = TwoBlocks(false);  // blocks, no contractions
  EXPECT_TRUE(FindBaseline("checkpoint-blocks")->applies(graph));
  EXPECT_FALSE(FindBaseline("selective")->applies(graph));
  try {
    SelectiveRecompute(graph, 0);
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("selective needs contractions"), std::string::npos)
        << error.what();
  }
  EXPECT_FALSE(FindBaseline("checkpoint-blocks")->applies(LinearGraph(4)));
  EXPECT_THROW(CheckpointBlocks(LinearGraph(4), 0), InputError);
}

class TransformerModulesTest : public ::testing::Test {
 protected:
  const Graph graph = BuildModelTrainingGraph(
      "transformer",
      {.batch = 2, .seq_length = 64, .layers = 4, .hidden = 64, .heads = 4, .vocab = 1000});
};

TEST_F(TransformerModulesTest, CheckpointingEveryBlockKeepsTheResidualStream) {
  const std::vector<bool> keep = BlockCheckpoints(graph);
  // Outside the blocks: the embedding, the final norm and the head; each block hands its
  // last residual add to the next block (or to ln_f).
  EXPECT_EQ(KeptNames(graph, keep),
            (std::vector<std::string>{"embedding", "h0_mlp_add", "h1_mlp_add", "h2_mlp_add",
                                      "h3_mlp_add", "ln_f", "lm_head"}));
  const StrategyResult blocks = CheckpointBlocks(graph, int64_t{1} << 50);
  const StrategyResult all = CheckpointAll(graph, int64_t{1} << 50);
  EXPECT_LT(blocks.peak_bytes, all.peak_bytes);
  // One more forward of every block: the cost of the recomputed nodes, once each.
  EXPECT_DOUBLE_EQ(blocks.cost, all.cost + RecomputedCost(graph, keep));
}

TEST_F(TransformerModulesTest, SelectiveKeepsTheProductsOfEveryLayer) {
  const std::vector<bool> keep = SelectiveCheckpoints(graph);
  const std::vector<std::string> kept = KeptNames(graph, keep);
  // qkv, scores, context, projection, and the MLP's two: six per block; each block's last
  // residual add; the embedding, ln_f and the head.
  EXPECT_EQ(kept.size(), 6u * 4 + 4 + 3);
  EXPECT_EQ(kept[1], "h0_attn_qkv");
  EXPECT_EQ(kept.back(), "lm_head");
  const StrategyResult selective = SelectiveRecompute(graph, int64_t{1} << 50);
  const StrategyResult all = CheckpointAll(graph, int64_t{1} << 50);
  EXPECT_LT(selective.peak_bytes, all.peak_bytes);
  EXPECT_LT(selective.cost - all.cost, CheckpointBlocks(graph, 0).cost - all.cost);
}

}  // namespace
}  // namespace remat
