// Where a command's graph comes from: --graph FILE (remat or node-link JSON).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "core/graph.h"

namespace remat {

struct GraphSource {
  std::string graph_path;
};

// Adds --graph to a subcommand.
void AddGraphSourceOptions(CLI::App& command, GraphSource& source);

// Loads and validates the graph; InputError (exit 3) on a bad file, UsageError when no
// source was given.
Graph LoadGraphSource(const GraphSource& source);

}  // namespace remat
