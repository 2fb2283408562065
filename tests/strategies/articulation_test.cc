#include "strategies/articulation.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/training_graph.h"

namespace remat {
namespace {

Graph Training(int32_t f, std::vector<Edge> edges) {
  ForwardGraph forward;
  for (int32_t i = 0; i < f; ++i) forward.nodes.push_back({.name = "n", .cost = 1, .bytes = 1});
  forward.edges = std::move(edges);
  return BuildTrainingGraph(forward);
}

TEST(ArticulationTest, EveryNodeOfAChainIsACandidate) {
  EXPECT_EQ(ForwardArticulationPoints(Training(4, {{0, 1}, {1, 2}, {2, 3}})),
            (std::vector<int32_t>{0, 1, 2, 3}));
}

TEST(ArticulationTest, NodesInsideAResidualBlockAreNot) {
  // 0 -> 1 -> 2 -> 3 -> 4 with a skip 1 -> 3: 2 lies on a cycle with 1 and 3.
  EXPECT_EQ(ForwardArticulationPoints(Training(5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {1, 3}})),
            (std::vector<int32_t>{0, 1, 3, 4}));
}

TEST(ArticulationTest, UNetSkipsLeaveOnlyTheEnds) {
  // 0 -> 1 -> 2 -> 3 -> 4 with 0 -> 4 (a long skip): only 0 and 4 cut the graph.
  EXPECT_EQ(ForwardArticulationPoints(Training(5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 4}})),
            (std::vector<int32_t>{0, 4}));
}

TEST(ArticulationTest, RefusesUnlabeledGraphs) {
  const Graph g({{}, {}}, {{0, 1}});
  EXPECT_THROW(ForwardArticulationPoints(g), InputError);
}

}  // namespace
}  // namespace remat
