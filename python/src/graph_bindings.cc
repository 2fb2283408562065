// The computation graph in Python: nodes are built from keyword arguments, graphs are
// validated by the C++ constructor and read or written as graph JSON.
#include "graph_bindings.h"

#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "core/graph.h"
#include "core/graph_json.h"

namespace py = pybind11;

namespace remat {
namespace {

// Python can pass any integer; the C++ graph assumes ids in [0, size).
int32_t NodeId(const Graph& graph, int32_t id) {
  if (id < 0 || id >= graph.size()) {
    throw InputError("node " + std::to_string(id) + " does not exist (the graph has " +
                     std::to_string(graph.size()) + " nodes)");
  }
  return id;
}

}  // namespace

void BindGraph(py::module_& m) {
  py::enum_<NodeKind>(m, "NodeKind")
      .value("forward", NodeKind::kForward)
      .value("loss", NodeKind::kLoss)
      .value("backward", NodeKind::kBackward)
      .value("unlabeled", NodeKind::kUnlabeled);

  py::class_<Node>(m, "Node")
      .def(py::init([](std::string name, NodeKind kind, double cost, int64_t bytes,
                       int32_t forward_of, int64_t workspace_bytes, std::string block,
                       bool contraction) {
             return Node{.name = std::move(name), .kind = kind, .cost = cost, .bytes = bytes,
                         .workspace_bytes = workspace_bytes, .forward_of = forward_of,
                         .block = std::move(block), .contraction = contraction};
           }),
           py::arg("name"), py::arg("kind"), py::arg("cost"), py::arg("bytes"),
           py::arg("forward_of") = -1, py::arg("workspace_bytes") = 0, py::arg("block") = "",
           py::arg("contraction") = false)
      .def_readonly("name", &Node::name)
      .def_readonly("kind", &Node::kind)
      .def_readonly("cost", &Node::cost)
      .def_readonly("bytes", &Node::bytes)
      .def_readonly("workspace_bytes", &Node::workspace_bytes)
      .def_readonly("forward_of", &Node::forward_of)
      .def_readonly("block", &Node::block)
      .def_readonly("contraction", &Node::contraction)
      .def("__repr__", [](const Node& n) {
        return "Node(" + n.name + ", " + NodeKindName(n.kind) + ", cost=" +
               std::to_string(n.cost) + ", bytes=" + std::to_string(n.bytes) + ")";
      });

  py::class_<Graph>(m, "Graph")
      .def(py::init([](std::vector<Node> nodes,
                       const std::vector<std::pair<int32_t, int32_t>>& edges,
                       std::string cost_unit, std::string name) {
             std::vector<Edge> e;
             e.reserve(edges.size());
             for (const auto& [src, dst] : edges) e.push_back({.src = src, .dst = dst});
             return Graph(std::move(nodes), std::move(e), std::move(cost_unit), std::move(name));
           }),
           py::arg("nodes"), py::arg("edges"), py::arg("cost_unit") = "unit",
           py::arg("name") = "", "Validates the DAG; InputError names what is wrong.")
      .def_property_readonly("size", &Graph::size)
      .def("__len__", &Graph::size)
      .def_property_readonly("nodes", &Graph::nodes)
      .def_property_readonly("edges",
                             [](const Graph& g) {
                               std::vector<std::pair<int32_t, int32_t>> out;
                               for (const Edge& e : g.edges()) out.emplace_back(e.src, e.dst);
                               return out;
                             })
      .def_property_readonly("cost_unit", &Graph::cost_unit)
      .def_property_readonly("name", &Graph::name)
      .def_property_readonly("loss", &Graph::loss)
      .def_property_readonly("has_training_structure", &Graph::has_training_structure)
      .def("preds", [](const Graph& g, int32_t id) { return g.preds(NodeId(g, id)); })
      .def("succs", [](const Graph& g, int32_t id) { return g.succs(NodeId(g, id)); })
      .def_property_readonly("total_cost", &Graph::total_cost)
      .def_property_readonly("total_bytes", &Graph::total_bytes)
      .def("to_json", &GraphToJson)
      .def_static("from_json", &GraphFromJson, py::arg("text"), py::arg("source") = "<string>")
      .def_static("load", &LoadGraphFile, py::arg("path"))
      .def("save", [](const Graph& g, const std::string& path) { SaveGraphFile(g, path); },
           py::arg("path"))
      .def_property_readonly("fingerprint", &GraphFingerprint)
      .def("__repr__", [](const Graph& g) {
        return "Graph(" + (g.name().empty() ? std::string("unnamed") : g.name()) + ", " +
               std::to_string(g.size()) + " nodes, " + std::to_string(g.edges().size()) +
               " edges)";
      });
}

}  // namespace remat
