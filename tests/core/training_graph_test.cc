#include "core/training_graph.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/errors.h"

namespace remat {
namespace {

bool HasEdge(const Graph& g, int32_t u, int32_t v) {
  for (int32_t w : g.succs(u)) {
    if (w == v) return true;
  }
  return false;
}

TEST(TrainingGraphTest, ChainOf22LayersGives45NodesAnd87Edges) {
  ForwardGraph forward;
  for (int i = 0; i < 22; ++i) forward.nodes.push_back({.name = "l", .cost = 1, .bytes = 1});
  for (int i = 0; i + 1 < 22; ++i) forward.edges.push_back({i, i + 1});
  const Graph g = BuildTrainingGraph(forward);
  EXPECT_EQ(g.size(), 45);
  EXPECT_EQ(g.edges().size(), 87u);  // 3*21 + 22 + 2
}

TEST(TrainingGraphTest, DiamondFollowsTheRuleEdgeByEdge) {
  // Forward 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3 (f = 4, loss 4, bwd(i) = 8 - i).
  ForwardGraph forward;
  for (int i = 0; i < 4; ++i) {
    forward.nodes.push_back({.name = "n", .cost = 3.0 + i, .bytes = 10 * (i + 1)});
  }
  forward.edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  forward.loss_bytes = 8;
  const Graph g = BuildTrainingGraph(forward);
  ASSERT_EQ(g.size(), 9);
  EXPECT_EQ(g.edges().size(), 3u * 4 + 4 + 2);
  EXPECT_EQ(g.loss(), 4);
  // Forward edge 1 -> 3 gives 1 -> 3, bwd(3)=5 -> bwd(1)=7 and 3 -> bwd(1)=7.
  EXPECT_TRUE(HasEdge(g, 1, 3));
  EXPECT_TRUE(HasEdge(g, 5, 7));
  EXPECT_TRUE(HasEdge(g, 3, 7));
  // Every forward node feeds its own gradient; the last forward node feeds the loss.
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(HasEdge(g, i, 8 - i));
  EXPECT_TRUE(HasEdge(g, 3, 4));
  EXPECT_TRUE(HasEdge(g, 4, 5));
  // bwd(2) = 6: twice the forward cost 5, same bytes 30, twin 2.
  EXPECT_EQ(g.node(6).kind, NodeKind::kBackward);
  EXPECT_EQ(g.node(6).forward_of, 2);
  EXPECT_DOUBLE_EQ(g.node(6).cost, 10.0);
  EXPECT_EQ(g.node(6).bytes, 30);
  EXPECT_EQ(g.node(4).bytes, 8);
  EXPECT_DOUBLE_EQ(g.node(4).cost, 0.0);
}

std::vector<Edge> SortedEdges(const Graph& g) {
  std::vector<Edge> edges = g.edges();
  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    return a.src != b.src ? a.src < b.src : a.dst < b.dst;
  });
  return edges;
}

TEST(TrainingGraphTest, ProductOfTwoActivationsGivesEachGradientTheOtherFactor) {
  // Attention's shape: 0 feeds 1 and 2, node 3 = 1 * 2 reads both (f = 4, bwd(i) = 8 - i).
  // The VJP of 3 with respect to 1 reads 2 and the reverse, so beyond the paper's 3*4 + 4 + 2 = 18
  // edges come 2 -> bwd(1) = 7 and 1 -> bwd(2) = 6: 20 edges.
  ForwardGraph forward;
  for (int i = 0; i < 4; ++i) forward.nodes.push_back({.name = "n", .cost = 1, .bytes = 1});
  forward.nodes[3].backward_reads_inputs = true;
  forward.edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  const Graph g = BuildTrainingGraph(forward);
  EXPECT_EQ(SortedEdges(g), (std::vector<Edge>{{0, 1}, {0, 2}, {0, 8}, {1, 3}, {1, 6}, {1, 7},
                                               {1, 8}, {2, 3}, {2, 6}, {2, 7}, {2, 8}, {3, 4},
                                               {3, 5}, {3, 6}, {3, 7}, {4, 5}, {5, 6}, {5, 7},
                                               {6, 8}, {7, 8}}));
  // Without the flag the graph is the paper's (docs/design.md §1).
  forward.nodes[3].backward_reads_inputs = false;
  EXPECT_EQ(BuildTrainingGraph(forward).edges().size(), 18u);
}

TEST(TrainingGraphTest, ProductEdgeThatAlreadyExistsIsNotDuplicated) {
  // 0 -> 1, 0 -> 2, 1 -> 2, 2 -> 3 with node 2 = 0 * 1 flagged. docs/design.md §1: 3*4 + 4 + 2 = 18
  // edges, among them 1 -> bwd(0) = 8 (1 is a consumer of 0), which the product rule would
  // add again; only 0 -> bwd(1) = 7 is new: 19 edges, and the graph validates (no duplicate).
  ForwardGraph forward;
  for (int i = 0; i < 4; ++i) forward.nodes.push_back({.name = "n", .cost = 1, .bytes = 1});
  forward.nodes[2].backward_reads_inputs = true;
  forward.edges = {{0, 1}, {0, 2}, {1, 2}, {2, 3}};
  const Graph g = BuildTrainingGraph(forward);
  EXPECT_EQ(SortedEdges(g), (std::vector<Edge>{{0, 1}, {0, 2}, {0, 7}, {0, 8}, {1, 2}, {1, 7},
                                               {1, 8}, {2, 3}, {2, 6}, {2, 7}, {2, 8}, {3, 4},
                                               {3, 5}, {3, 6}, {4, 5}, {5, 6}, {6, 7}, {6, 8},
                                               {7, 8}}));
}

TEST(TrainingGraphTest, RejectsInvalidForwardGraph) {
  ForwardGraph forward;
  forward.nodes = {{.name = "a", .cost = 1, .bytes = 1}, {.name = "b", .cost = 1, .bytes = 1}};
  forward.edges = {{1, 0}};
  EXPECT_THROW(BuildTrainingGraph(forward), InputError);
  EXPECT_THROW(BuildTrainingGraph(ForwardGraph{}), InputError);
}

TEST(LinearGraphTest, EightLayersHave17NodesAnd24Edges) {
  const Graph g = LinearGraph(8);
  EXPECT_EQ(g.size(), 17);
  EXPECT_EQ(g.edges().size(), 24u);  // 16 consecutive pairs + 8 forward-to-gradient
  EXPECT_EQ(g.loss(), 8);
  EXPECT_EQ(g.preds(16), (std::vector<int32_t>{0, 15}));  // bwd(0) reads 0 and bwd(1)
  EXPECT_EQ(g.preds(9), (std::vector<int32_t>{7, 8}));    // bwd(7) reads 7 and the loss
  EXPECT_EQ(g.node(12).forward_of, 4);
  EXPECT_DOUBLE_EQ(g.total_cost(), 17);
  EXPECT_EQ(g.total_bytes(), 17);
}

TEST(LinearGraphTest, DiffersFromTrainingGraphOfAChain) {
  // The builder adds i -> bwd(i-1) consumer-output edges that linear(n) does not have.
  ForwardGraph chain;
  for (int i = 0; i < 8; ++i) chain.nodes.push_back({.name = "l", .cost = 1, .bytes = 1});
  for (int i = 0; i + 1 < 8; ++i) chain.edges.push_back({i, i + 1});
  EXPECT_EQ(BuildTrainingGraph(chain).edges().size(), 3u * 7 + 8 + 2);
  EXPECT_EQ(LinearGraph(8).edges().size(), 24u);
}

}  // namespace
}  // namespace remat
