// Tests src/core/cost_profile.cc: a profile round-trips and replaces a graph's costs, and is
// refused for another graph.
#include "core/cost_profile.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/training_graph.h"

namespace remat {
namespace {

TEST(CostProfileTest, AppliesMeasuredCostsToTheSameStructure) {
  const Graph graph = LinearGraph(3);  // 7 unit-cost nodes
  CostProfile profile{.structure_fingerprint = StructureFingerprint(graph), .model = "linear",
                      .model_options = {{"batch", "2"}, {"resolution", "32x32"}}};
  for (int32_t id = 0; id < graph.size(); ++id) {
    profile.nodes.push_back({.id = id, .name = graph.node(id).name, .cost_ms = 0.5 * id});
  }
  const CostProfile loaded = CostProfileFromJson(CostProfileToJson(profile), "p.json");
  EXPECT_EQ(loaded.model_options, profile.model_options);
  const Graph timed = ApplyCostProfile(graph, loaded, "p.json");
  EXPECT_EQ(timed.cost_unit(), "ms");
  EXPECT_EQ(timed.node(4).cost, 2.0);  // 0.5 ms * 4
  EXPECT_EQ(timed.edges(), graph.edges());
  // Costs do not enter the structure fingerprint: the timed graph still matches.
  EXPECT_EQ(StructureFingerprint(timed), profile.structure_fingerprint);
}

TEST(CostProfileTest, MeasuredWorkspaceReplacesTheGraphsWhereGiven) {
  std::vector<Node> nodes = LinearGraph(2).nodes();
  nodes[1].workspace_bytes = 7;  // an estimate the profile replaces
  nodes[3].workspace_bytes = 9;  // kept: the profile has no measurement for node 3
  const Graph graph(nodes, LinearGraph(2).edges(), "unit", "linear(2)");
  // Workspace, estimated or measured, is not structure: the profile of the plain chain applies.
  CostProfile profile{.structure_fingerprint = StructureFingerprint(LinearGraph(2))};
  for (int32_t id = 0; id < graph.size(); ++id) {
    profile.nodes.push_back({.id = id, .name = graph.node(id).name, .cost_ms = 1});
  }
  profile.nodes[1].workspace_bytes = 100;
  profile.nodes[2].workspace_bytes = 0;
  const CostProfile loaded = CostProfileFromJson(CostProfileToJson(profile), "p.json");
  EXPECT_EQ(loaded.nodes[1].workspace_bytes, std::optional<int64_t>(100));
  EXPECT_EQ(loaded.nodes[2].workspace_bytes, std::optional<int64_t>(0));
  EXPECT_FALSE(loaded.nodes[3].workspace_bytes.has_value());
  const Graph timed = ApplyCostProfile(graph, loaded, "p.json");
  EXPECT_EQ(timed.node(1).workspace_bytes, 100);
  EXPECT_EQ(timed.node(2).workspace_bytes, 0);
  EXPECT_EQ(timed.node(3).workspace_bytes, 9);
  std::string text = CostProfileToJson(profile);
  const std::string measured = "\"workspace_bytes\": 100";
  text.replace(text.find(measured), measured.size(), "\"workspace_bytes\": -100");
  try {
    CostProfileFromJson(text, "p.json");
    FAIL() << "expected an error";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("p.json: nodes[1].workspace_bytes"),
              std::string::npos)
        << error.what();
  }
}

TEST(CostProfileTest, RefusesAnotherGraph) {
  const Graph graph = LinearGraph(3);
  CostProfile profile{.structure_fingerprint = StructureFingerprint(LinearGraph(4))};
  for (int32_t id = 0; id < graph.size(); ++id) {
    profile.nodes.push_back({.id = id, .name = graph.node(id).name, .cost_ms = 1});
  }
  EXPECT_THROW(ApplyCostProfile(graph, profile, "p.json"), InputError);
}

TEST(CostProfileTest, MalformedDocumentNamesTheField) {
  try {
    CostProfileFromJson(R"({"schema": "remat.costs/1", "cost_unit": "ms",
                            "structure_fingerprint": "x", "model": "m", "settings": "",
                            "nodes": [{"id": 0, "name": "a", "cost_ms": -1}]})",
                        "p.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nodes[0].cost_ms"), std::string::npos) << e.what();
  }
}

// Found in review while adding the fuzzer: an id was narrowed to int32 before the check, so
// 2^32 (which wraps to 0) passed for node 0.
TEST(CostProfileTest, AnIdThatWrapsToTheIndexIsRefused) {
  try {
    CostProfileFromJson(R"({"schema": "remat.costs/1", "cost_unit": "ms",
                            "structure_fingerprint": "x", "model": "m", "settings": "",
                            "nodes": [{"id": 4294967296, "name": "a", "cost_ms": 1}]})",
                        "p.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("p.json: nodes[0].id: is 4294967296, expected 0"),
              std::string::npos)
        << e.what();
  }
}

// Each cost is a valid number, but 7 nodes of 1e300 ms sum above kMaxTotalCost (1e290): bad
// input that names the profile.
TEST(CostProfileTest, CostsTooLargeForTheGraphNameTheProfile) {
  const Graph graph = LinearGraph(3);
  CostProfile profile{.structure_fingerprint = StructureFingerprint(graph)};
  for (int32_t id = 0; id < graph.size(); ++id) {
    profile.nodes.push_back({.id = id, .name = graph.node(id).name, .cost_ms = 1e300});
  }
  try {
    ApplyCostProfile(graph, profile, "p.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("p.json: ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("sum of the nodes' costs"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace remat
