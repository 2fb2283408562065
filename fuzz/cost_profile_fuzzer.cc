// libFuzzer entry point: any bytes are read as a cost profile (CostProfileFromJson) and, when
// accepted, applied to a small fixed graph as `remat --costs FILE` does. Reading and applying
// must either succeed or throw InputError; anything else (a crash, a sanitizer report, another
// exception) is a bug. Accepted profiles round-trip; applied ones keep the graph's structure.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "core/cost_profile.h"
#include "core/errors.h"
#include "core/training_graph.h"
#include "graph_checks.h"

namespace {

using namespace remat;

bool SameProfile(const CostProfile& a, const CostProfile& b) {
  if (a.structure_fingerprint != b.structure_fingerprint || a.model != b.model ||
      a.settings != b.settings || a.model_options != b.model_options ||
      a.nodes.size() != b.nodes.size()) {
    return false;
  }
  for (size_t k = 0; k < a.nodes.size(); ++k) {
    if (a.nodes[k].id != b.nodes[k].id || a.nodes[k].name != b.nodes[k].name ||
        std::memcmp(&a.nodes[k].cost_ms, &b.nodes[k].cost_ms, sizeof(double)) != 0) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fuzz::Require;
  // The paper's linear graph with 2 forward nodes (5 nodes); the seed corpus holds profiles
  // measured "on" it, with its structure fingerprint.
  static const Graph fixed = LinearGraph(2);
  static const std::string fixed_fingerprint = StructureFingerprint(fixed);
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::optional<CostProfile> profile;
  try {
    profile.emplace(CostProfileFromJson(text, "fuzz.json"));
  } catch (const InputError&) {
    return 0;  // rejected with a message: the expected outcome for nearly every input
  }
  for (size_t k = 0; k < profile->nodes.size(); ++k) {
    Require(profile->nodes[k].id == static_cast<int32_t>(k) && profile->nodes[k].cost_ms >= 0);
  }
  std::optional<CostProfile> back;
  try {
    back.emplace(CostProfileFromJson(CostProfileToJson(*profile), "round-trip.json"));
  } catch (const InputError&) {
    __builtin_trap();  // remat wrote a profile it cannot read
  }
  Require(SameProfile(*profile, *back));
  std::optional<Graph> timed;
  try {
    timed.emplace(ApplyCostProfile(fixed, *profile, "fuzz.json"));
  } catch (const InputError&) {
    return 0;  // measured on another graph, or costs the graph cannot take
  }
  Require(timed->size() == fixed.size() && timed->edges() == fixed.edges());
  Require(timed->cost_unit() == "ms" && timed->name() == fixed.name());
  Require(StructureFingerprint(*timed) == fixed_fingerprint);
  for (int32_t id = 0; id < fixed.size(); ++id) {
    Require(timed->node(id).name == fixed.node(id).name);
    Require(timed->node(id).cost == profile->nodes[id].cost_ms);
  }
  fuzz::CheckAcceptedGraph(*timed);
  return 0;
}
