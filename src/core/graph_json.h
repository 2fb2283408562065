// Graph files: remat's own JSON format (docs/formats.md) and the node-link JSON of published
// Checkmate/Moccasin artifacts.
#pragma once

#include <cstdint>
#include <string>

#include "core/graph.h"

namespace remat {

inline constexpr const char* kGraphSchema = "remat.graph/1";

// remat's format. `source` names the file in error messages.
std::string GraphToJson(const Graph& graph);
Graph GraphFromJson(const std::string& text, const std::string& source);

// Node-link JSON: `nodes` (id, name, backward, cost_cpu, cost_ram) and `links` (source,
// target). The loss is the first node, by id, whose `backward` is true.
Graph GraphFromNodeLinkJson(const std::string& text, const std::string& source);

// Reads either format, detected from the content ("schema" versus "links").
Graph LoadGraphFile(const std::string& path);
// Writes remat's format atomically.
void SaveGraphFile(const Graph& graph, const std::string& path);

// A 64-bit FNV-1a hash of node costs, bytes, kinds and edges, written as 16 hex digits; a
// schedule file records it so it is never applied to a different graph.
std::string GraphFingerprint(const Graph& graph);

}  // namespace remat
