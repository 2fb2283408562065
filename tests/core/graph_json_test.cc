#include "core/graph_json.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/training_graph.h"
#include "testing/random_graphs.h"

namespace remat {
namespace {

std::string ErrorOf(const std::string& text) {
  try {
    GraphFromJson(text, "g.json");
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

void ExpectSameGraph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.size(), b.size());
  for (int32_t v = 0; v < a.size(); ++v) {
    EXPECT_EQ(a.node(v).name, b.node(v).name);
    EXPECT_EQ(a.node(v).kind, b.node(v).kind);
    EXPECT_EQ(a.node(v).cost, b.node(v).cost);  // bit-exact doubles
    EXPECT_EQ(a.node(v).bytes, b.node(v).bytes);
    EXPECT_EQ(a.node(v).workspace_bytes, b.node(v).workspace_bytes);
    EXPECT_EQ(a.node(v).forward_of, b.node(v).forward_of);
    EXPECT_EQ(a.node(v).block, b.node(v).block);
    EXPECT_EQ(a.node(v).contraction, b.node(v).contraction);
  }
  EXPECT_EQ(a.edges(), b.edges());
  EXPECT_EQ(a.cost_unit(), b.cost_unit());
  EXPECT_EQ(a.name(), b.name());
}

TEST(GraphJsonTest, RoundTripsExactlyIncludingAwkwardDoubles) {
  ForwardGraph forward = testing::RandomForwardGraph(7, 12);
  forward.nodes[3].cost = 0.1 + 0.2;  // 0.30000000000000004
  forward.nodes[4].cost = 1e-300;
  forward.nodes[5].bytes = int64_t{1} << 52;
  forward.cost_unit = "flop";
  const Graph graph = BuildTrainingGraph(forward);
  const std::string text = GraphToJson(graph);
  const Graph back = GraphFromJson(text, "mem");
  ExpectSameGraph(graph, back);
  EXPECT_EQ(GraphToJson(back), text);
  EXPECT_EQ(GraphFingerprint(back), GraphFingerprint(graph));
}

TEST(GraphJsonTest, WorkspaceBytesRoundTripAndChangeTheFingerprint) {
  ForwardGraph forward = testing::RandomForwardGraph(5, 6);
  const Graph plain = BuildTrainingGraph(forward);
  forward.nodes[2].workspace_bytes = 12345;
  forward.nodes[4].backward_workspace_bytes = int64_t{1} << 40;
  const Graph graph = BuildTrainingGraph(forward);
  EXPECT_EQ(graph.node(2).workspace_bytes, 12345);
  EXPECT_EQ(graph.node(2 * 6 - 4).workspace_bytes, int64_t{1} << 40);
  const std::string text = GraphToJson(graph);
  EXPECT_NE(text.find("\"workspace_bytes\": 12345"), std::string::npos);
  // Written only where it is not 0, so graphs without workspace keep their files.
  EXPECT_EQ(GraphToJson(plain).find("workspace_bytes"), std::string::npos);
  const Graph back = GraphFromJson(text, "mem");
  ExpectSameGraph(graph, back);
  EXPECT_EQ(GraphToJson(back), text);
  EXPECT_NE(GraphFingerprint(graph), GraphFingerprint(plain));
  const std::string head = R"({"schema": "remat.graph/1", "cost_unit": "unit", "edges": [], )";
  EXPECT_NE(ErrorOf(head + R"("nodes": [{"id": 0, "kind": "unlabeled", "cost": 1, "bytes": 1,
                     "workspace_bytes": -3}]})")
                .find("g.json: nodes[0].workspace_bytes: must be >= 0, got -3"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + R"("nodes": [{"id": 0, "kind": "unlabeled", "cost": 1, "bytes": 1,
                     "workspace_bytes": 1e400}]})")
                .find("g.json: field 'workspace_bytes'"),
            std::string::npos);
}

TEST(GraphJsonTest, ModuleStructureRoundTripsOnForwardNodesOnly) {
  ForwardGraph forward = testing::RandomForwardGraph(6, 8);
  forward.nodes[1].block = "layers.0";
  forward.nodes[2].block = "layers.0";
  forward.nodes[2].contraction = true;
  const Graph plain = BuildTrainingGraph(testing::RandomForwardGraph(6, 8));
  const Graph graph = BuildTrainingGraph(forward);
  const std::string text = GraphToJson(graph);
  EXPECT_NE(text.find("\"block\": \"layers.0\""), std::string::npos);
  EXPECT_EQ(GraphToJson(plain).find("block"), std::string::npos);  // written only when set
  const Graph back = GraphFromJson(text, "mem");
  ExpectSameGraph(graph, back);
  EXPECT_TRUE(HasBlocks(back) && HasContractions(back));
  EXPECT_FALSE(HasBlocks(plain) || HasContractions(plain));
  // Labels, not costs: the fingerprint (and so the caches keyed by it) does not change.
  EXPECT_EQ(GraphFingerprint(graph), GraphFingerprint(plain));
  const std::string head = R"({"schema": "remat.graph/1", "cost_unit": "unit", )";
  EXPECT_NE(ErrorOf(head + R"("nodes": [{"id": 0, "kind": "forward", "cost": 1, "bytes": 1},
                     {"id": 1, "kind": "loss", "cost": 0, "bytes": 1, "contraction": true}],
                     "edges": [[0, 1]]})")
                .find("node 1 is a loss node but declares contraction; only forward "
                      "nodes have module structure"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + R"("nodes": [{"id": 0, "kind": "forward", "cost": 1, "bytes": 1,
                     "block": 3}], "edges": []})")
                .find("nodes[0].block: expected a string"),
            std::string::npos);
}

TEST(GraphJsonTest, ErrorsNameTheFieldAndProblem) {
  const std::string head = R"({"schema": "remat.graph/1", "cost_unit": "unit", )";
  EXPECT_EQ(ErrorOf(""), "g.json: the file is empty");
  EXPECT_NE(ErrorOf(R"({"schema": "remat.graph/1", "nodes": [)").find("truncated"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + R"("nodes": [{"id": 0, "kind": "forward", "cost": "1", "bytes": 1}],
                     "edges": []})")
                .find("g.json: nodes[0].cost: expected a number, got a string"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + R"("nodes": [{"id": 0, "kind": "unlabeled", "cost": 1, "bytes": 1.5}],
                     "edges": []})")
                .find("nodes[0].bytes: expected an integer"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + R"("nodes": [{"id": 0, "kind": "unlabeled", "cost": 1, "bytes": 1}],
                     "edges": [[0, 99999999999]]})")
                .find("edges[0][1]: id 99999999999 is out of range"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + R"("nodes": [{"id": 0, "kind": "sideways", "cost": 1, "bytes": 1}],
                     "edges": []})")
                .find("unknown kind 'sideways'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + R"("nodes": [{"id": 0, "kind": "unlabeled", "cost": -2, "bytes": 1}],
                     "edges": []})")
                .find("g.json: node 0: cost must be a finite number >= 0, got -2"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + R"("nodes": [], "edges": []})").find("graph has no nodes"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + R"("nodes": [{"id": 0, "kind": "forward", "cost": 1, "bytes": 1},
                     {"id": 1, "kind": "loss", "cost": 0, "bytes": 1}], "edges": [[0, 1]],
                     "loss": 5})")
                .find("loss: declares loss node 5, which does not exist"),
            std::string::npos);
  EXPECT_NE(ErrorOf(R"({"schema": "remat.graph/9"})").find("unsupported schema"),
            std::string::npos);
}

// Issue 14, defect 4: numbers that cannot be represented, and sums that would overflow,
// are bad input naming the file and the field or quantity, never an internal error.
TEST(GraphJsonTest, HugeNumbersAndOverflowingSumsAreBadInput) {
  const std::string head = R"({"schema": "remat.graph/1", "cost_unit": "flop", "nodes": [)";
  auto node = [](int id, const std::string& cost, const std::string& bytes) {
    return "{\"id\": " + std::to_string(id) + ", \"name\": \"n\", \"kind\": \"unlabeled\", " +
           "\"cost\": " + cost + ", \"bytes\": " + bytes + "}";
  };
  const std::string e400 = ErrorOf(head + node(0, "1e400", "4") + R"(], "edges": []})");
  EXPECT_NE(e400.find("g.json: field 'cost'"), std::string::npos) << e400;
  // Two nodes of 2^62 - 1 bytes: each fits int64, their sum does not fit the limit.
  const std::string big = std::to_string((int64_t{1} << 62) - 1);
  const std::string sum = ErrorOf(head + node(0, "1", big) + "," + node(1, "1", big) +
                                  R"(], "edges": []})");
  EXPECT_NE(sum.find("sum of the nodes' bytes"), std::string::npos) << sum;
  const std::string cost = ErrorOf(head + node(0, "1e300", "4") + R"(], "edges": []})");
  EXPECT_NE(cost.find("sum of the nodes' costs"), std::string::npos) << cost;
}

TEST(NodeLinkTest, ImportsCheckmateStyleGraph) {
  // Forward 0 -> 1, loss 2 (first backward node), backward 3 = bwd(1), 4 = bwd(0).
  const std::string text = R"({"directed": true, "graph": {"name": "tiny"}, "nodes": [
      {"id": 2, "name": "loss", "backward": true, "cost_cpu": 0.5, "cost_ram": 4},
      {"id": 0, "name": "conv", "backward": false, "cost_cpu": 3.0, "cost_ram": 400},
      {"id": 1, "name": "fc", "backward": false, "cost_cpu": 2.0, "cost_ram": 40},
      {"id": 3, "name": "fc_grad", "backward": true, "cost_cpu": 4.0, "cost_ram": 40},
      {"id": 4, "name": "conv_grad", "backward": true, "cost_cpu": 6.0, "cost_ram": 400}],
    "links": [{"source": 0, "target": 1}, {"source": 1, "target": 2}, {"source": 2, "target": 3},
              {"source": 3, "target": 4}, {"source": 1, "target": 3}, {"source": 0, "target": 4}]})";
  const Graph g = GraphFromNodeLinkJson(text, "nl.json");
  EXPECT_EQ(g.name(), "tiny");
  EXPECT_EQ(g.loss(), 2);
  EXPECT_EQ(g.node(0).kind, NodeKind::kForward);
  EXPECT_EQ(g.node(3).kind, NodeKind::kBackward);
  EXPECT_EQ(g.node(3).forward_of, 1);  // 2f - i with f = 2
  EXPECT_EQ(g.node(4).forward_of, 0);
  EXPECT_EQ(g.node(1).bytes, 40);
  EXPECT_DOUBLE_EQ(g.node(4).cost, 6.0);
  EXPECT_EQ(g.edges().size(), 6u);
}

TEST(NodeLinkTest, RejectsDuplicateIdsAndForwardAfterLoss) {
  EXPECT_THROW(GraphFromNodeLinkJson(R"({"nodes": [
      {"id": 0, "backward": false, "cost_cpu": 1, "cost_ram": 1},
      {"id": 0, "backward": true, "cost_cpu": 1, "cost_ram": 1}], "links": []})", "x"),
               InputError);
  try {
    GraphFromNodeLinkJson(R"({"nodes": [
      {"id": 0, "backward": true, "cost_cpu": 1, "cost_ram": 1},
      {"id": 1, "backward": false, "cost_cpu": 1, "cost_ram": 1}], "links": []})", "x");
    FAIL();
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("node 1 comes after the loss node 0"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace remat
