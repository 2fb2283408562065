// remat-run profile: time every node of a zoo network and write a cost profile that records
// the sizes it was measured at.
#include "cli/run_profile_command.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/commands.h"
#include "cli/output_paths.h"
#include "cli/run_common.h"
#include "core/cost_profile.h"
#include "core/training_graph.h"
#include "exec/cost_comparison.h"
#include "exec/network.h"
#include "exec/profiler.h"

namespace remat {
namespace {

struct ProfileArgs {
  RunModelArgs model;
  exec::ProfileOptions options;
  std::string output;
};

// The size options a model was built with, for the profile (names without dashes).
std::map<std::string, std::string> SizeOptions(ZooModelArgs sized) {
  std::map<std::string, std::string> options;
  if (!sized.resolution.empty()) options["resolution"] = sized.resolution;
  for (const auto& [name, value] : IntegerSizeFields(sized)) {
    if (*value != 0) options[name] = std::to_string(*value);
  }
  return options;
}

// How well the zoo's FLOP costs predict the measured times: printed after a profile.
void PrintCostComparison(const Graph& graph, const CostProfile& profile) {
  std::vector<double> flops, measured;
  for (int32_t v = 0; v < graph.size(); ++v) {
    flops.push_back(graph.node(v).cost);
    measured.push_back(profile.nodes[v].cost_ms);
  }
  const CostComparison c = CompareCosts(flops, measured);
  fmt::print("FLOP costs vs measured times over {} nodes: Pearson r {:.3f}, Spearman rho {:.3f}\n",
             c.nodes, c.pearson, c.spearman);
  fmt::print("at the step's rate of {:.3g} GFLOP/s: median node error {:.0f}%, {:.0f}% of nodes "
             "within 2x\n",
             1e-6 / c.rate, 100 * c.median_relative_error, 100 * c.within_factor_2);
  fmt::print("zero-FLOP nodes: {} taking {:.1f}% of the measured step\n", c.zero_cost_nodes,
             100 * c.zero_cost_measured_share);
  // Forward nodes run their own layer; a backward node bwd(j) runs the backward kernels of j's
  // consumers (docs/design.md §1's edges), and the zoo charges it theirs.
  const int32_t loss = *graph.loss();
  for (const bool forward : {true, false}) {
    std::vector<double> part_flops, part_measured;
    for (int32_t v = 0; v < graph.size(); ++v) {
      if (v == loss || (v < loss) != forward) continue;
      part_flops.push_back(flops[v]);
      part_measured.push_back(measured[v]);
    }
    const CostComparison part = CompareCosts(part_flops, part_measured);
    fmt::print("{} nodes: Pearson r {:.3f}, Spearman rho {:.3f}, {:.3g} GFLOP/s, median error "
               "{:.0f}%\n",
               forward ? "forward" : "backward", part.pearson, part.spearman, 1e-6 / part.rate,
               100 * part.median_relative_error);
  }
  fmt::print("largest errors:\n");
  for (const NodeCostError& e : c.worst) {
    fmt::print("  {:>5} {:<28} predicted {:>9.3f} ms  measured {:>9.3f} ms\n", e.id,
               graph.node(e.id).name, e.predicted, e.measured);
  }
}

// The zoo's workspace estimates against the measured ones: the largest of each, and the node
// the estimate misses by the most.
void PrintWorkspaceComparison(const Graph& graph, const CostProfile& profile) {
  int32_t largest_estimated = 0, largest_measured = 0, worst = 0;
  int64_t worst_error = -1;
  for (int32_t v = 0; v < graph.size(); ++v) {
    const int64_t estimated = graph.node(v).workspace_bytes;
    const int64_t measured = profile.nodes[v].workspace_bytes.value_or(0);
    if (estimated > graph.node(largest_estimated).workspace_bytes) largest_estimated = v;
    if (measured > profile.nodes[largest_measured].workspace_bytes.value_or(0)) {
      largest_measured = v;
    }
    if (std::abs(measured - estimated) > worst_error) {
      worst_error = std::abs(measured - estimated);
      worst = v;
    }
  }
  fmt::print("workspace: largest estimated {} B ({}), largest measured {} B ({}); largest "
             "error {} B at {} (estimated {} B, measured {} B)\n",
             graph.node(largest_estimated).workspace_bytes, graph.node(largest_estimated).name,
             profile.nodes[largest_measured].workspace_bytes.value_or(0),
             graph.node(largest_measured).name, worst_error, graph.node(worst).name,
             graph.node(worst).workspace_bytes, profile.nodes[worst].workspace_bytes.value_or(0));
}

int RunProfile(ProfileArgs args) {
  CheckOutputPath("-o", args.output, {});
  args.options.threads = args.model.threads;
  const BuiltModel model = BuildRunModel(args.model);
  const Graph graph = BuildTrainingGraph(model.forward);
  exec::Network network(model.info, args.model.seed);
  CostProfile profile = exec::ProfileGraph(network, graph, args.options);
  profile.model_options = SizeOptions(WithRunDefaults(args.model.zoo));
  SaveCostProfile(profile, args.output);
  double total = 0;
  for (const CostProfileNode& node : profile.nodes) total += node.cost_ms;
  fmt::print(stderr, "remat-run: profiled {} nodes of {} ({:.3f} ms per step) into {}\n",
             profile.nodes.size(), graph.name(), total, args.output);
  PrintCostComparison(graph, profile);
  PrintWorkspaceComparison(graph, profile);
  return kExitOk;
}

}  // namespace

void AddRunProfileCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* profile = app.add_subcommand("profile", "time every node and write a cost profile");
  AddRunModelOptions(*profile, args->model);
  profile->add_option("--warmup", args->options.warmup, "untimed runs per node")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  profile->add_option("--repeats", args->options.repeats, "timed runs per node (median)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  profile->add_option("-o,--output", args->output, "cost profile JSON to write")
      ->check(kOutputPath)
      ->required();
  profile->callback([args, &exit_code] { exit_code = RunProfile(*args); });
}

}  // namespace remat
