// Cheap invariants that the graph fuzzers assert on every accepted graph; a violation is a bug
// and stops the fuzzer with __builtin_trap, so libFuzzer saves the input.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "core/errors.h"
#include "core/graph.h"
#include "core/graph_json.h"

namespace remat::fuzz {

inline void Require(bool condition) {
  if (!condition) __builtin_trap();
}

// Same nodes (costs compared bit for bit), edges, unit, name and loss.
inline bool SameGraph(const Graph& a, const Graph& b) {
  if (a.size() != b.size() || a.edges() != b.edges() || a.cost_unit() != b.cost_unit() ||
      a.name() != b.name() || a.loss() != b.loss()) {
    return false;
  }
  for (int32_t id = 0; id < a.size(); ++id) {
    const Node& x = a.node(id);
    const Node& y = b.node(id);
    if (x.name != y.name || x.kind != y.kind || x.bytes != y.bytes ||
        x.forward_of != y.forward_of || std::memcmp(&x.cost, &y.cost, sizeof x.cost) != 0) {
      return false;
    }
  }
  return true;
}

// An accepted graph round-trips through remat's format unchanged (a graph that loads must also
// save and load again: `remat graph convert`), and `remat graph info`'s figures hold together:
// the no-rematerialization schedule is a schedule, so its peak is at least the lower bound.
inline void CheckAcceptedGraph(const Graph& graph) {
  for (const Edge& edge : graph.edges()) Require(0 <= edge.src && edge.src < edge.dst &&
                                                 edge.dst < graph.size());
  const std::string text = GraphToJson(graph);
  std::optional<Graph> back;
  try {
    back.emplace(GraphFromJson(text, "round-trip.json"));
  } catch (const InputError&) {
    __builtin_trap();  // remat wrote a graph file it cannot read
  }
  Require(SameGraph(graph, *back));
  Require(GraphToJson(*back) == text);
  Require(GraphFingerprint(*back) == GraphFingerprint(graph));
  const int64_t no_remat_peak = NoRematPeakBytes(graph);
  const int64_t lower_bound = MinimumPeakLowerBound(graph);
  Require(0 <= lower_bound && lower_bound <= no_remat_peak &&
          no_remat_peak <= graph.total_bytes());
  Require(graph.total_cost() >= 0);
}

}  // namespace remat::fuzz
