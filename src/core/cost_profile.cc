// Cost profile JSON (docs/exec.md) and its application to a graph.
#include "core/cost_profile.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/file_io.h"
#include "core/graph_json.h"
#include "core/json_fields.h"

namespace remat {

using nlohmann::json;
using json_fields::Where;

std::string StructureFingerprint(const Graph& graph) {
  std::vector<Node> nodes = graph.nodes();
  for (Node& node : nodes) {
    node.cost = 0;
    node.workspace_bytes = 0;  // estimated or measured: the profile may replace them
  }
  return GraphFingerprint(Graph(std::move(nodes), graph.edges(), graph.cost_unit(), graph.name()));
}

std::string CostProfileToJson(const CostProfile& profile) {
  json nodes = json::array();
  for (const CostProfileNode& node : profile.nodes) {
    json entry = {{"id", node.id}, {"name", node.name}, {"cost_ms", node.cost_ms}};
    if (node.workspace_bytes) entry["workspace_bytes"] = *node.workspace_bytes;
    nodes.push_back(std::move(entry));
  }
  const json document = {{"schema", kCostProfileSchema},
                         {"structure_fingerprint", profile.structure_fingerprint},
                         {"model", profile.model},
                         {"settings", profile.settings},
                         {"model_options", profile.model_options},
                         {"cost_unit", "ms"},
                         {"nodes", nodes}};
  return document.dump(1) + "\n";
}

CostProfile CostProfileFromJson(const std::string& text, const std::string& source) {
  const json document = json_fields::ParseText(text, source);
  const Where root{source, ""};
  auto string_field = [&](const json& object, const std::string& key, const Where& where) {
    const json& value = json_fields::Field(object, key, where);
    if (!value.is_string()) (where / key).Fail("expected a string");
    return value.get<std::string>();
  };
  if (string_field(document, "schema", root) != kCostProfileSchema) {
    (root / "schema").Fail(fmt::format("expected \"{}\"", kCostProfileSchema));
  }
  if (string_field(document, "cost_unit", root) != "ms") (root / "cost_unit").Fail("expected \"ms\"");
  CostProfile profile{.structure_fingerprint = string_field(document, "structure_fingerprint", root),
                      .model = string_field(document, "model", root),
                      .settings = string_field(document, "settings", root)};
  if (document.contains("model_options")) {
    const json& options = document["model_options"];
    if (!options.is_object()) (root / "model_options").Fail("expected an object");
    for (const auto& [key, value] : options.items()) {
      if (!value.is_string()) (root / "model_options" / key).Fail("expected a string");
      profile.model_options[key] = value.get<std::string>();
    }
  }
  const json& nodes = json_fields::Field(document, "nodes", root);
  if (!nodes.is_array()) (root / "nodes").Fail("expected an array");
  for (size_t k = 0; k < nodes.size(); ++k) {
    const Where where = (root / "nodes")[k];
    CostProfileNode node;
    // Compared before narrowing: 2^32 must not pass for node 0.
    const int64_t id =
        json_fields::AsInt64(json_fields::Field(nodes[k], "id", where), where / "id");
    if (id != static_cast<int64_t>(k)) (where / "id").Fail(fmt::format("is {}, expected {}", id, k));
    node.id = static_cast<int32_t>(k);
    node.name = string_field(nodes[k], "name", where);
    const json& cost = json_fields::Field(nodes[k], "cost_ms", where);
    if (!cost.is_number() || !(cost.get<double>() >= 0)) {
      (where / "cost_ms").Fail("expected a non-negative number");
    }
    node.cost_ms = cost.get<double>();
    if (nodes[k].contains("workspace_bytes")) {
      node.workspace_bytes =
          json_fields::AsInt64(nodes[k]["workspace_bytes"], where / "workspace_bytes");
      if (*node.workspace_bytes < 0) (where / "workspace_bytes").Fail("expected bytes >= 0");
    }
    profile.nodes.push_back(std::move(node));
  }
  return profile;
}

void SaveCostProfile(const CostProfile& profile, const std::string& path) {
  WriteFileAtomically(path, CostProfileToJson(profile));
}

CostProfile LoadCostProfile(const std::string& path) {
  return CostProfileFromJson(ReadFileText(path), path);
}

namespace {

// The graph's nodes, checked against the profile: same structure, count and names.
std::vector<Node> MatchedNodes(const Graph& graph, const CostProfile& profile,
                               const std::string& source) {
  if (static_cast<int32_t>(profile.nodes.size()) != graph.size()) {
    throw InputError(fmt::format("{}: {} nodes, but the graph has {}", source,
                                 profile.nodes.size(), graph.size()));
  }
  const std::string fingerprint = StructureFingerprint(graph);
  if (profile.structure_fingerprint != fingerprint) {
    throw InputError(fmt::format("{}: structure_fingerprint {} does not match the graph's {} "
                                 "(profiled on a different model, batch or resolution)",
                                 source, profile.structure_fingerprint, fingerprint));
  }
  std::vector<Node> nodes = graph.nodes();
  for (int32_t id = 0; id < graph.size(); ++id) {
    if (profile.nodes[id].name != nodes[id].name) {
      throw InputError(fmt::format("{}: nodes[{}].name is '{}', the graph's node is '{}'", source,
                                   id, profile.nodes[id].name, nodes[id].name));
    }
    if (profile.nodes[id].workspace_bytes) {
      nodes[id].workspace_bytes = *profile.nodes[id].workspace_bytes;
    }
  }
  return nodes;
}

}  // namespace

Graph ApplyCostProfile(const Graph& graph, const CostProfile& profile, const std::string& source) {
  std::vector<Node> nodes = MatchedNodes(graph, profile, source);
  for (int32_t id = 0; id < graph.size(); ++id) nodes[id].cost = profile.nodes[id].cost_ms;
  try {
    return Graph(std::move(nodes), graph.edges(), "ms", graph.name());
  } catch (const InputError& error) {
    // Costs the graph cannot take (their sum above kMaxTotalCost): name the profile.
    throw InputError(fmt::format("{}: {}", source, error.what()));
  }
}

Graph ApplyProfileWorkspace(const Graph& graph, const CostProfile& profile,
                            const std::string& source) {
  std::vector<Node> nodes = MatchedNodes(graph, profile, source);
  try {
    return Graph(std::move(nodes), graph.edges(), graph.cost_unit(), graph.name());
  } catch (const InputError& error) {
    // Workspace the graph cannot take (bytes beyond its limits): name the profile.
    throw InputError(fmt::format("{}: {}", source, error.what()));
  }
}

Graph ApplyCostProfile(const Graph& graph, const std::string& path) {
  return ApplyCostProfile(graph, LoadCostProfile(path), path);
}

}  // namespace remat
