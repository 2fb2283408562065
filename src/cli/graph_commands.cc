// remat graph info | convert | linear | random-layered.
#include "cli/graph_commands.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/output_paths.h"
#include "cli/output.h"
#include "core/sizes.h"
#include "core/graph_json.h"
#include "core/training_graph.h"
#include "zoo/random_layered.h"

namespace remat {
namespace {

void PrintInfo(const std::string& path, bool as_json) {
  const Graph graph = LoadGraphFile(path);
  // Linear time and memory: no n x n schedule is built (a 100,000-node chain in well under a
  // second).
  const int64_t no_remat_peak = NoRematPeakBytes(graph);
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
        {"no_remat_peak_bytes", no_remat_peak},
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
      {"no-remat peak", fmt::format("{} ({} B)", FormatBytes(no_remat_peak), no_remat_peak)},
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
  convert->add_option("-o,--output", *convert_out, "output file (remat JSON)")
      ->check(kOutputPath)->required();
  convert->callback([=, &exit_code] {
    CheckOutputPath("-o", *convert_out, {*convert_in});
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
  linear->add_option("-o,--output", *linear_out, "output file (remat JSON)")
      ->check(kOutputPath)->required();
  linear->callback([=, &exit_code] {
    CheckOutputPath("-o", *linear_out, {});
    const Graph g = LinearGraph(*linear_n);
    SaveGraphFile(g, *linear_out);
    fmt::print("wrote {} ({} nodes, {} edges)\n", *linear_out, g.size(), g.edges().size());
    exit_code = kExitOk;
  });
  auto random = std::make_shared<RandomLayeredOptions>();
  auto random_out = std::make_shared<std::string>();
  CLI::App* layered = graph->add_subcommand(
      "random-layered", "write a seeded random layered DAG (unlabeled) for tests and benchmarks");
  layered->add_option("--nodes", random->nodes, "number of nodes (default 1000)")
      ->check(CLI::Range(1, 1000000));
  layered->add_option("--width", random->width, "nodes per layer (default 10)")
      ->check(CLI::Range(1, 1000000));
  layered->add_option("--edges", random->edges,
                      "expected number of edges (default 6000; at least one input per node "
                      "outside the first layer)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  layered->add_option("--span", random->span,
                      "an edge reaches back at most this many layers (default 3)")
      ->check(CLI::Range(1, 1000000));
  layered->add_option("--seed", random->seed, "random seed (default 1)");
  layered->add_option("--min-cost", random->min_cost, "smallest node cost (default 1)")
      ->check(CLI::Range(0, 1000000000));
  layered->add_option("--max-cost", random->max_cost, "largest node cost (default 100)")
      ->check(CLI::Range(0, 1000000000));
  layered->add_option("--min-bytes", random->min_bytes,
                      "smallest output size and the size step, bytes (default 1 MiB)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  layered->add_option("--max-bytes", random->max_bytes, "largest output size, bytes (default 64 MiB)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  layered->add_option("-o,--output", *random_out, "output file (remat JSON)")
      ->check(kOutputPath)->required();
  layered->callback([=, &exit_code] {
    CheckOutputPath("-o", *random_out, {});
    const Graph g = RandomLayeredGraph(*random);
    SaveGraphFile(g, *random_out);
    fmt::print("wrote {} ({} nodes, {} edges)\n", *random_out, g.size(), g.edges().size());
    exit_code = kExitOk;
  });
}

}  // namespace remat
