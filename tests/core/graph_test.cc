#include "core/graph.h"

#include <gtest/gtest.h>

#include "core/errors.h"

namespace remat {
namespace {

Node Plain(double cost = 1, int64_t bytes = 1) { return {.name = "", .cost = cost, .bytes = bytes}; }

// Runs the constructor and returns its InputError message ("" when the graph is valid).
std::string Error(std::vector<Node> nodes, std::vector<Edge> edges) {
  try {
    Graph(std::move(nodes), std::move(edges));
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

TEST(GraphTest, PredecessorsAndSuccessorsAreSorted) {
  const Graph g({Plain(), Plain(), Plain(), Plain()}, {{1, 3}, {0, 3}, {0, 1}, {0, 2}});
  EXPECT_EQ(g.preds(3), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(g.succs(0), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(g.last_consumer(0), 3);
  EXPECT_EQ(g.last_consumer(3), -1);
  EXPECT_FALSE(g.has_training_structure());
}

TEST(GraphTest, RejectsEmptyGraph) { EXPECT_EQ(Error({}, {}), "graph has no nodes"); }

TEST(GraphTest, RejectsNegativeCostAndBytes) {
  EXPECT_NE(Error({Plain(-1, 1)}, {}).find("node 0: cost must be a finite number >= 0"),
            std::string::npos);
  EXPECT_NE(Error({Plain(1, 1), Plain(1, -5)}, {}).find("node 1: bytes must be >= 0, got -5"),
            std::string::npos);
}

TEST(GraphTest, RejectsNegativeAndOverflowingWorkspace) {
  Node negative = Plain();
  negative.workspace_bytes = -1;
  EXPECT_NE(Error({Plain(), negative}, {}).find("node 1: workspace_bytes must be >= 0, got -1"),
            std::string::npos);
  Node huge = Plain(1, int64_t{1} << 61);
  huge.workspace_bytes = int64_t{1} << 61;
  EXPECT_NE(Error({Plain(), huge}, {}).find("exceeds 2^62 B"), std::string::npos);
}

TEST(GraphTest, RejectsSelfAndDuplicateEdges) {
  EXPECT_NE(Error({Plain(), Plain()}, {{1, 1}}).find("edge 0 (1 -> 1) is a self edge"),
            std::string::npos);
  EXPECT_NE(Error({Plain(), Plain()}, {{0, 1}, {0, 1}}).find("edge 1 (0 -> 1) duplicates edge 0"),
            std::string::npos);
}

TEST(GraphTest, RejectsEdgeToMissingNode) {
  EXPECT_NE(Error({Plain(), Plain()}, {{0, 7}}).find("node 7 does not exist"), std::string::npos);
}

TEST(GraphTest, RejectsCycleNamingIt) {
  const std::string message = Error({Plain(), Plain(), Plain()}, {{0, 1}, {1, 2}, {2, 1}});
  EXPECT_NE(message.find("cycle: 1 -> 2 -> 1"), std::string::npos) << message;
}

TEST(GraphTest, RejectsIdsNotInTopologicalOrder) {
  const std::string message = Error({Plain(), Plain(), Plain()}, {{0, 2}, {2, 1}});
  EXPECT_NE(message.find("not in topological order: edge 1 (2 -> 1)"), std::string::npos)
      << message;
}

TEST(GraphTest, RejectsMissingOrWrongForwardTwin) {
  std::vector<Node> nodes = {{.kind = NodeKind::kForward},
                             {.kind = NodeKind::kLoss},
                             {.kind = NodeKind::kBackward, .forward_of = 9}};
  EXPECT_NE(Error(nodes, {{0, 1}, {1, 2}}).find("declares forward twin 9, which does not exist"),
            std::string::npos);
  nodes[2].forward_of = 1;
  EXPECT_NE(Error(nodes, {{0, 1}, {1, 2}}).find("which is a loss node, not forward"),
            std::string::npos);
}

TEST(GraphTest, RejectsInconsistentLabels) {
  EXPECT_NE(Error({{.kind = NodeKind::kForward}, {.kind = NodeKind::kBackward}}, {{0, 1}})
                .find("has no loss node"),
            std::string::npos);
  EXPECT_NE(Error({{.kind = NodeKind::kForward}, {.kind = NodeKind::kUnlabeled}}, {})
                .find("node 1 has no kind"),
            std::string::npos);
  EXPECT_NE(Error({{.kind = NodeKind::kLoss}, {.kind = NodeKind::kForward}}, {})
                .find("forward node 1 comes after the loss node 0"),
            std::string::npos);
}

TEST(GraphTest, MinimumPeakLowerBoundIsLargestNodeWithItsInputs) {
  // Node 2 reads 0 and 1: 4 + 8 + 16 = 28 bytes must be live together.
  const Graph g({Plain(1, 4), Plain(1, 8), Plain(1, 16), Plain(1, 20)},
                {{0, 2}, {1, 2}, {2, 3}});
  EXPECT_EQ(MinimumPeakLowerBound(g), 36);  // node 3 with its input 2: 20 + 16
}

}  // namespace
}  // namespace remat
