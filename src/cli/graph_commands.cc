// remat graph info | convert | linear.
#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/output.h"
#include "core/sizes.h"
#include "core/graph_json.h"
#include "core/training_graph.h"
#include "strategies/checkpoint_all.h"

namespace remat {
namespace {

void PrintInfo(const std::string& path, bool as_json) {
  const Graph graph = LoadGraphFile(path);
  const StrategyResult no_remat = CheckpointAll(graph, std::numeric_limits<int64_t>::max());
  const int64_t lower_bound = MinimumPeakLowerBound(graph);
  int32_t counts[4] = {0, 0, 0, 0};
  for (const Node& node : graph.nodes()) ++counts[static_cast<int>(node.kind)];
  if (as_json) {
    const nlohmann::json doc = {
        {"schema", "remat.graph-info/1"},
        {"file", path},
        {"name", graph.name()},
        {"nodes", graph.size()},
        {"edges", graph.edges().size()},
        {"forward_nodes", counts[static_cast<int>(NodeKind::kForward)]},
        {"backward_nodes", counts[static_cast<int>(NodeKind::kBackward)]},
        {"loss_node", graph.loss() ? nlohmann::json(*graph.loss()) : nlohmann::json(nullptr)},
        {"cost_unit", graph.cost_unit()},
        {"total_cost", graph.total_cost()},
        {"total_bytes", graph.total_bytes()},
        {"no_remat_peak_bytes", no_remat.peak_bytes},
        {"min_peak_lower_bound_bytes", lower_bound},
        {"fingerprint", GraphFingerprint(graph)}};
    fmt::print("{}\n", doc.dump(2));
    return;
  }
  std::vector<std::vector<std::string>> rows = {
      {"name", graph.name().empty() ? "(none)" : graph.name()},
      {"nodes", fmt::format("{} ({} forward, loss {}, {} backward{})", graph.size(),
                            counts[static_cast<int>(NodeKind::kForward)],
                            graph.loss() ? std::to_string(*graph.loss()) : "none",
                            counts[static_cast<int>(NodeKind::kBackward)],
                            graph.has_training_structure() ? "" : "; unlabeled DAG")},
      {"edges", std::to_string(graph.edges().size())},
      {"sum of costs", fmt::format("{:g} {}", graph.total_cost(), graph.cost_unit())},
      {"sum of bytes", fmt::format("{} ({} B)", FormatBytes(graph.total_bytes()),
                                   graph.total_bytes())},
      {"no-remat peak", fmt::format("{} ({} B)", FormatBytes(no_remat.peak_bytes),
                                    no_remat.peak_bytes)},
      {"min peak lower bound", fmt::format("{} ({} B): largest output plus its inputs",
                                           FormatBytes(lower_bound), lower_bound)},
      {"fingerprint", GraphFingerprint(graph)}};
  fmt::print("{}", FormatTable({"graph", path}, rows));
}

}  // namespace

void AddGraphCommands(CLI::App& app, int& exit_code) {
  CLI::App* graph = app.add_subcommand("graph", "inspect, convert and generate graph files");
  graph->require_subcommand(1);

  auto info_path = std::make_shared<std::string>();
  auto info_json = std::make_shared<bool>(false);
  CLI::App* info = graph->add_subcommand("info", "sizes, peaks and costs of a graph file");
  info->add_option("file", *info_path, "graph file (remat or node-link JSON)")->required();
  info->add_flag("--json", *info_json, "machine-readable output");
  info->callback([=, &exit_code] {
    PrintInfo(*info_path, *info_json);
    exit_code = kExitOk;
  });

  auto convert_in = std::make_shared<std::string>();
  auto convert_out = std::make_shared<std::string>();
  CLI::App* convert =
      graph->add_subcommand("convert", "rewrite a graph file (e.g. node-link JSON) in remat's format");
  convert->add_option("file", *convert_in, "input graph file")->required();
  convert->add_option("-o,--output", *convert_out, "output file (remat JSON)")->required();
  convert->callback([=, &exit_code] {
    const Graph g = LoadGraphFile(*convert_in);
    SaveGraphFile(g, *convert_out);
    fmt::print("wrote {} ({} nodes, {} edges)\n", *convert_out, g.size(), g.edges().size());
    exit_code = kExitOk;
  });

  auto linear_n = std::make_shared<int32_t>(0);
  auto linear_out = std::make_shared<std::string>();
  CLI::App* linear =
      graph->add_subcommand("linear", "write the paper's linear benchmark graph with N layers");
  linear->add_option("n", *linear_n, "number of forward layers (2N+1 nodes)")
      ->required()
      ->check(CLI::Range(1, 100000));
  linear->add_option("-o,--output", *linear_out, "output file (remat JSON)")->required();
  linear->callback([=, &exit_code] {
    const Graph g = LinearGraph(*linear_n);
    SaveGraphFile(g, *linear_out);
    fmt::print("wrote {} ({} nodes, {} edges)\n", *linear_out, g.size(), g.edges().size());
    exit_code = kExitOk;
  });
}

}  // namespace remat
