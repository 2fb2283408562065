// Loading the graph a command works on.
#include "cli/load_graph.h"

#include "cli/commands.h"
#include "core/graph_json.h"

namespace remat {

void AddGraphSourceOptions(CLI::App& command, GraphSource& source) {
  command.add_option("--graph", source.graph_path,
                     "graph file: remat JSON or node-link JSON (detected from the content)");
}

Graph LoadGraphSource(const GraphSource& source) {
  if (source.graph_path.empty()) throw UsageError("give the graph with --graph FILE");
  return LoadGraphFile(source.graph_path);
}

}  // namespace remat
