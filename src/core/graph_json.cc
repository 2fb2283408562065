// Reading and writing graph files (remat's JSON and node-link JSON).
#include "core/graph_json.h"

#include <algorithm>
#include <cstring>

#include "core/file_io.h"
#include "core/json_fields.h"

namespace remat {
namespace {

using namespace json_fields;

// Reruns graph validation and prefixes its message with the file name.
Graph MakeGraph(std::vector<Node> nodes, std::vector<Edge> edges, std::string cost_unit,
                std::string name, const std::string& source) {
  try {
    return Graph(std::move(nodes), std::move(edges), std::move(cost_unit), std::move(name));
  } catch (const InputError& error) {
    throw InputError(fmt::format("{}: {}", source, error.what()));
  }
}

}  // namespace

std::string GraphToJson(const Graph& graph) {
  json nodes = json::array();
  for (int32_t id = 0; id < graph.size(); ++id) {
    const Node& node = graph.node(id);
    json entry = {{"id", id},
                  {"name", node.name},
                  {"kind", NodeKindName(node.kind)},
                  {"cost", node.cost},
                  {"bytes", node.bytes}};
    if (node.workspace_bytes > 0) entry["workspace_bytes"] = node.workspace_bytes;
    if (node.forward_of >= 0) entry["forward"] = node.forward_of;
    if (!node.block.empty()) entry["block"] = node.block;
    if (node.contraction) entry["contraction"] = true;
    nodes.push_back(std::move(entry));
  }
  json edges = json::array();
  for (const Edge& edge : graph.edges()) edges.push_back({edge.src, edge.dst});
  json doc = {{"schema", kGraphSchema},
              {"name", graph.name()},
              {"cost_unit", graph.cost_unit()},
              {"nodes", std::move(nodes)},
              {"edges", std::move(edges)}};
  if (graph.loss()) doc["loss"] = *graph.loss();
  return doc.dump(1) + "\n";
}

Graph GraphFromJson(const std::string& text, const std::string& source) {
  const json doc = ParseText(text, source);
  const Where root{source, ""};
  const std::string schema = AsString(Field(doc, "schema", root), root / "schema");
  if (schema != kGraphSchema) {
    (root / "schema").Fail(fmt::format("unsupported schema '{}', expected '{}'", schema,
                                       kGraphSchema));
  }
  const std::string name = doc.contains("name") ? AsString(doc["name"], root / "name") : "";
  const std::string cost_unit = AsString(Field(doc, "cost_unit", root), root / "cost_unit");
  const json& node_list = AsArray(Field(doc, "nodes", root), root / "nodes");
  const int64_t n = static_cast<int64_t>(node_list.size());
  std::vector<Node> nodes(node_list.size());
  for (size_t k = 0; k < node_list.size(); ++k) {
    const Where at = (root / "nodes")[k];
    const json& entry = node_list[k];
    const int32_t id = AsId(Field(entry, "id", at), n, at / "id");
    if (id != static_cast<int32_t>(k)) {
      (at / "id").Fail(fmt::format("is {}, but nodes must be listed in id order (expected {})", id,
                                   k));
    }
    Node& node = nodes[k];
    node.name = entry.contains("name") ? AsString(entry["name"], at / "name") : "";
    const std::string kind = AsString(Field(entry, "kind", at), at / "kind");
    const auto parsed = ParseNodeKind(kind);
    if (!parsed) {
      (at / "kind").Fail(fmt::format("unknown kind '{}' (forward, loss, backward or unlabeled)",
                                     kind));
    }
    node.kind = *parsed;
    node.cost = AsDouble(Field(entry, "cost", at), at / "cost");
    node.bytes = AsInt64(Field(entry, "bytes", at), at / "bytes");
    if (entry.contains("workspace_bytes")) {
      node.workspace_bytes = AsInt64(entry["workspace_bytes"], at / "workspace_bytes");
      if (node.workspace_bytes < 0) {
        (at / "workspace_bytes").Fail(fmt::format("must be >= 0, got {}", node.workspace_bytes));
      }
    }
    if (entry.contains("forward")) {
      // Checked against the node list by Graph validation ("declares forward twin ...").
      const int64_t twin = AsInt64(entry["forward"], at / "forward");
      if (twin < 0 || twin >= n) {
        (at / "forward").Fail(fmt::format("declares forward twin {}, which does not exist "
                                          "(ids 0..{})",
                                          twin, n - 1));
      }
      node.forward_of = static_cast<int32_t>(twin);
    }
    // Checked against the kind by Graph validation (module structure is forward nodes' only).
    if (entry.contains("block")) node.block = AsString(entry["block"], at / "block");
    if (entry.contains("contraction")) {
      node.contraction = AsBool(entry["contraction"], at / "contraction");
    }
  }
  const json& edge_list = AsArray(Field(doc, "edges", root), root / "edges");
  std::vector<Edge> edges;
  edges.reserve(edge_list.size());
  for (size_t k = 0; k < edge_list.size(); ++k) {
    const Where at = (root / "edges")[k];
    const json& pair = AsArray(edge_list[k], at);
    if (pair.size() != 2) at.Fail("expected [source, target]");
    edges.push_back({AsId(pair[0], n, at[0]), AsId(pair[1], n, at[1])});
  }
  Graph graph = MakeGraph(std::move(nodes), std::move(edges), cost_unit, name, source);
  if (doc.contains("loss")) {
    const int64_t loss = AsInt64(doc["loss"], root / "loss");
    if (loss < 0 || loss >= n) {
      (root / "loss").Fail(fmt::format("declares loss node {}, which does not exist (ids 0..{})",
                                       loss, n - 1));
    }
    if (graph.loss() != loss) {
      (root / "loss").Fail(fmt::format("declares loss node {}, but node {} has kind '{}'", loss,
                                       loss, NodeKindName(graph.node(loss).kind)));
    }
  }
  return graph;
}

Graph GraphFromNodeLinkJson(const std::string& text, const std::string& source) {
  const json doc = ParseText(text, source);
  const Where root{source, ""};
  const json& node_list = AsArray(Field(doc, "nodes", root), root / "nodes");
  const json& link_list = AsArray(Field(doc, "links", root), root / "links");
  const int64_t n = static_cast<int64_t>(node_list.size());
  std::vector<Node> nodes(node_list.size());
  std::vector<bool> seen(node_list.size(), false);
  std::vector<bool> backward(node_list.size(), false);
  for (size_t k = 0; k < node_list.size(); ++k) {
    const Where at = (root / "nodes")[k];
    const json& entry = node_list[k];
    const int32_t id = AsId(Field(entry, "id", at), n, at / "id");
    if (seen[id]) (at / "id").Fail(fmt::format("id {} appears twice", id));
    seen[id] = true;
    Node& node = nodes[id];
    node.name = entry.contains("name") ? AsString(entry["name"], at / "name")
                                       : fmt::format("node{}", id);
    backward[id] = AsBool(Field(entry, "backward", at), at / "backward");
    node.cost = AsDouble(Field(entry, "cost_cpu", at), at / "cost_cpu");
    node.bytes = AsInt64(Field(entry, "cost_ram", at), at / "cost_ram");
  }
  const auto loss_it = std::find(backward.begin(), backward.end(), true);
  if (loss_it != backward.end()) {
    const int32_t loss = static_cast<int32_t>(loss_it - backward.begin());
    const int32_t f = loss;  // forward nodes are 0..loss-1
    const bool twins = n == 2 * int64_t{f} + 1;
    for (int32_t id = 0; id < n; ++id) {
      if (id < loss) {
        nodes[id].kind = NodeKind::kForward;
      } else if (id == loss) {
        nodes[id].kind = NodeKind::kLoss;
      } else if (!backward[id]) {
        (root / "nodes").Fail(fmt::format("node {} comes after the loss node {} but has "
                                          "\"backward\": false",
                                          id, loss));
      } else {
        nodes[id].kind = NodeKind::kBackward;
        // Checkmate numbers bwd(i) = 2f - i when the graph has 2f+1 nodes.
        if (twins) nodes[id].forward_of = 2 * f - id;
      }
    }
  }
  std::vector<Edge> edges;
  edges.reserve(link_list.size());
  for (size_t k = 0; k < link_list.size(); ++k) {
    const Where at = (root / "links")[k];
    edges.push_back({AsId(Field(link_list[k], "source", at), n, at / "source"),
                     AsId(Field(link_list[k], "target", at), n, at / "target")});
  }
  const std::string name =
      doc.contains("graph") && doc["graph"].is_object() && doc["graph"].contains("name") &&
              doc["graph"]["name"].is_string()
          ? doc["graph"]["name"].get<std::string>()
          : "";
  return MakeGraph(std::move(nodes), std::move(edges), "cost_cpu", name, source);
}

Graph LoadGraphFile(const std::string& path) {
  const std::string text = ReadFileText(path);
  const json doc = ParseText(text, path);
  if (!doc.is_object()) {
    throw InputError(fmt::format("{}: expected a JSON object, got {}", path, TypeName(doc)));
  }
  if (doc.contains("schema")) return GraphFromJson(text, path);
  if (doc.contains("links")) return GraphFromNodeLinkJson(text, path);
  throw InputError(fmt::format("{}: not a graph file: it has neither \"schema\" (remat's format) "
                               "nor \"links\" (node-link JSON)",
                               path));
}

void SaveGraphFile(const Graph& graph, const std::string& path) {
  WriteFileAtomically(path, GraphToJson(graph));
}

std::string GraphFingerprint(const Graph& graph) {
  uint64_t hash = 1469598103934665603ULL;
  auto mix = [&hash](const void* data, size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (size_t k = 0; k < size; ++k) {
      hash ^= bytes[k];
      hash *= 1099511628211ULL;
    }
  };
  for (const Node& node : graph.nodes()) {
    mix(&node.cost, sizeof node.cost);
    mix(&node.bytes, sizeof node.bytes);
    // Graphs without workspace keep the fingerprints they had before the field existed.
    if (node.workspace_bytes != 0) mix(&node.workspace_bytes, sizeof node.workspace_bytes);
    const int32_t kind = static_cast<int32_t>(node.kind);
    mix(&kind, sizeof kind);
  }
  for (const Edge& edge : graph.edges()) {
    mix(&edge.src, sizeof edge.src);
    mix(&edge.dst, sizeof edge.dst);
  }
  return fmt::format("{:016x}", hash);
}

}  // namespace remat
