// Every kind of bad graph file exits 3 with a message that names the problem.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "cli/run_remat.h"

namespace remat {
namespace {

std::string Nodes(const std::string& nodes, const std::string& edges,
                  const std::string& extra = "") {
  return R"({"schema": "remat.graph/1", "cost_unit": "unit", "nodes": [)" + nodes +
         R"(], "edges": [)" + edges + "]" + extra + "}";
}

const std::string kN0 = R"({"id": 0, "kind": "unlabeled", "cost": 1, "bytes": 1})";
const std::string kN1 = R"({"id": 1, "kind": "unlabeled", "cost": 1, "bytes": 1})";
const std::string kN2 = R"({"id": 2, "kind": "unlabeled", "cost": 1, "bytes": 1})";

// name -> {file content, a substring the error message must contain}
const std::map<std::string, std::pair<std::string, std::string>>& Cases() {
  static const std::string three = kN0 + "," + kN1 + "," + kN2;
  static const std::vector<std::pair<std::string, std::string>> raw = {
      {"empty_file", ""},
      {"truncated", R"({"schema": "remat.graph/1", "nodes": [{"id": 0, "ki)"},
      {"wrong_type", Nodes(R"({"id": 0, "kind": "unlabeled", "cost": 1, "bytes": "abc"})", "")},
      {"huge_id", Nodes(kN0 + "," + kN1, "[0, 1000000000000]")},
      {"cycle", Nodes(three, "[0, 1], [1, 2], [2, 1]")},
      {"duplicate_edge", Nodes(kN0 + "," + kN1, "[0, 1], [0, 1]")},
      {"self_edge", Nodes(kN0 + "," + kN1, "[1, 1]")},
      {"negative_cost", Nodes(R"({"id": 0, "kind": "unlabeled", "cost": -3, "bytes": 1})", "")},
      {"negative_bytes", Nodes(R"({"id": 0, "kind": "unlabeled", "cost": 1, "bytes": -1})", "")},
      {"empty_graph", Nodes("", "")},
      {"not_topological", Nodes(three, "[0, 2], [2, 1]")},
      {"missing_twin",
       Nodes(R"({"id": 0, "kind": "forward", "cost": 1, "bytes": 1},
                {"id": 1, "kind": "loss", "cost": 0, "bytes": 1},
                {"id": 2, "kind": "backward", "cost": 2, "bytes": 1, "forward": 99})",
             "[0, 1], [1, 2]")},
      {"missing_loss",
       Nodes(R"({"id": 0, "kind": "forward", "cost": 1, "bytes": 1},
                {"id": 1, "kind": "loss", "cost": 0, "bytes": 1})",
             "[0, 1]", R"(, "loss": 7)")},
      {"array", "[1, 2, 3]"},
      {"neither_format", R"({"nodes": []})"},
      {"node_link_bad_ram",
       R"({"nodes": [{"id": 0, "backward": false, "cost_cpu": 1, "cost_ram": "big"}], "links": []})"},
  };
  static const std::map<std::string, std::string> messages = {
      {"empty_file", "the file is empty"},
      {"truncated", "truncated"},
      {"wrong_type", "nodes[0].bytes: expected an integer, got a string"},
      {"huge_id", "id 1000000000000 is out of range"},
      {"cycle", "cycle: 1 -> 2 -> 1"},
      {"duplicate_edge", "edge 1 (0 -> 1) duplicates edge 0"},
      {"self_edge", "edge 0 (1 -> 1) is a self edge"},
      {"negative_cost", "cost must be a finite number >= 0, got -3"},
      {"negative_bytes", "bytes must be >= 0, got -1"},
      {"empty_graph", "graph has no nodes"},
      {"not_topological", "not in topological order"},
      {"missing_twin", "declares forward twin 99, which does not exist"},
      {"missing_loss", "declares loss node 7, which does not exist"},
      {"array", "expected a JSON object, got an array"},
      {"neither_format", "not a graph file"},
      {"node_link_bad_ram", "nodes[0].cost_ram: expected an integer"},
  };
  static const auto* cases = [] {
    auto* table = new std::map<std::string, std::pair<std::string, std::string>>;
    for (const auto& [name, content] : raw) (*table)[name] = {content, messages.at(name)};
    return table;
  }();
  return *cases;
}

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const auto& entry : Cases()) names.push_back(entry.first);
  return names;
}

class MalformedInputTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MalformedInputTest, ExitsThreeNamingTheProblem) {
  const std::string& name = GetParam();
  const auto& [content, message] = Cases().at(name);
  const auto dir = testing::TempDir("malformed_" + name);
  const std::string path = (dir / (name + ".json")).string();
  std::ofstream(path) << content;
  for (const std::string& verb : {"graph info " + path, "solve --budget 1 --graph " + path}) {
    const auto run = testing::RunRemat(verb);
    EXPECT_EQ(run.exit_code, 3) << verb << "\n" << run.err;
    EXPECT_NE(run.err.find(message), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(path), std::string::npos) << "error must name the file: " << run.err;
  }
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Files, MalformedInputTest, ::testing::ValuesIn(CaseNames()),
                         [](const auto& info) { return info.param; });

TEST(MissingFileTest, ExitsThree) {
  const auto run = testing::RunRemat("graph info /nonexistent/graph.json");
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("/nonexistent/graph.json: cannot open"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace remat
