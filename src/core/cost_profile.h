// Measured per-node costs (a "cost profile", written by remat-run profile) and how a graph
// takes them: remat --costs FILE plans with measured milliseconds instead of FLOPs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.h"

namespace remat {

inline constexpr const char* kCostProfileSchema = "remat.costs/1";

struct CostProfileNode {
  int32_t id = 0;
  std::string name;
  double cost_ms = 0;  // median measured time of one evaluation, >= 0
  // Measured memory allocated and released inside the node, above its output (the largest
  // over the timed evaluations); absent in profiles written before it was measured.
  std::optional<int64_t> workspace_bytes;
};

struct CostProfile {
  // StructureFingerprint of the graph the profile was measured on.
  std::string structure_fingerprint;
  std::string model;       // informational: "vgg16", ...
  std::string settings;    // informational: batch, resolution, threads, repeats
  // The size options the model was built with, by option name without dashes ("batch" ->
  // "2", "resolution" -> "32x32"): remat solve --costs builds the model at these sizes when
  // it is given none. Empty in profiles written before they were recorded.
  std::map<std::string, std::string> model_options;
  std::vector<CostProfileNode> nodes;  // one per graph node, ids 0..n-1 in order
};

// GraphFingerprint of the graph with every cost set to 0: bytes, kinds and edges only, so a
// profile applies to the same network whatever cost model built the graph.
std::string StructureFingerprint(const Graph& graph);

std::string CostProfileToJson(const CostProfile& profile);
// Throws InputError naming `source` and the field for malformed documents.
CostProfile CostProfileFromJson(const std::string& text, const std::string& source);
void SaveCostProfile(const CostProfile& profile, const std::string& path);
CostProfile LoadCostProfile(const std::string& path);

// The graph with its costs replaced by the profile's (cost unit "ms"), and its workspace
// bytes by the profile's measured ones where the profile has them. Throws InputError
// naming `source` when the profile was measured on a different graph (fingerprint, node count
// or a node name differs).
Graph ApplyCostProfile(const Graph& graph, const CostProfile& profile,
                       const std::string& source = "cost profile");
// The graph with only its workspace bytes replaced by the profile's measured ones (costs and
// their unit kept): remat-run --measured-workspace. The same checks as ApplyCostProfile.
Graph ApplyProfileWorkspace(const Graph& graph, const CostProfile& profile,
                            const std::string& source = "cost profile");
// LoadCostProfile(path) then ApplyCostProfile.
Graph ApplyCostProfile(const Graph& graph, const std::string& path);

}  // namespace remat
