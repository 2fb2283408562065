// remat maxbatch: per strategy, the largest batch whose training step fits a device after its
// fixed memory, within an overhead cap (the paper's max-batch experiment, figure 6).
#include "cli/maxbatch_command.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/planning_options.h"
#include "cli/commands.h"
#include "cli/gnuplot.h"
#include "cli/maxbatch_plot.h"
#include "cli/output.h"
#include "cli/output_paths.h"
#include "cli/progress.h"
#include "core/sizes.h"
#include "planning/size_parsing.h"
#include "planning/strategy_runner.h"
#include "cli/zoo_commands.h"
#include "planning/max_batch.h"
#include "core/errors.h"
#include "core/training_graph.h"
#include "model/devices.h"
#include "model/fixed_memory.h"
#include "solvers/checkmate_solver.h"
#include "solvers/lower_bound.h"
#include "strategies/registry.h"

namespace remat {
namespace {

struct MaxBatchOptions {
  ZooModelArgs zoo;
  std::string memory_text;
  std::string strategies = "all";
  SolverSettings solver{.time_limit_s = 60};
  double max_overhead = 0;  // 0: one extra forward pass (the paper's cap)
  int64_t max_batch = 65536;
  double total_time_limit_s = 0;  // the whole command; 0: none
  bool json = false;
  bool quiet = false;
  std::string plot_path;
};

// The zoo model at each batch size, with its fixed memory under the chosen optimizer.
BatchGraphBuilder ZooBatchBuilder(const MaxBatchOptions& options) {
  const ModelOptions model_options = ToModelOptions(options.zoo);
  const Optimizer optimizer = ToOptimizer(options.zoo);
  const std::string model = options.zoo.model;
  return [model_options, optimizer, model](int64_t batch) {
    ModelOptions sized = model_options;
    sized.batch = batch;
    const BuiltModel built = BuildModel(model, sized);
    const FixedMemory fixed = ComputeFixedMemory(built.info, optimizer);
    return BatchGraph{.graph = BuildTrainingGraph(built.forward),
                      .fixed_bytes = fixed.total_bytes(),
                      .input_bytes = fixed.input_bytes};
  };
}

nlohmann::json ProbeJson(const BatchProbe& p) {
  nlohmann::json j = {{"batch", p.batch},
                      {"activation_budget_bytes", p.budget_bytes},
                      {"fixed_memory_bytes", p.fixed_bytes},
                      {"outcome", BatchOutcomeName(p.outcome)},
                      {"solve_time_s", p.seconds}};
  if (!p.reason.empty()) j["reason"] = p.reason;
  if (!p.solver_status.empty()) j["solver_status"] = p.solver_status;
  if (p.cost) j["cost"] = *p.cost;
  if (p.overhead) j["overhead"] = *p.overhead;
  if (p.peak_bytes) j["peak_bytes"] = *p.peak_bytes;
  return j;
}

// Why the search stopped: the verdict at max_batch + 1, and for optimal whether it is proven.
std::string StopText(const StrategySearch& s) {
  if (s.limit_reached) return "reached --max-batch";
  const std::string stopped = s.stopped_at_total_limit ? "stopped at --total-time-limit; " : "";
  if (!s.next) return stopped.empty() ? "-" : stopped;
  std::string text = stopped + fmt::format("{}: {}", s.next->batch, s.next->reason);
  if (s.strategy == "optimal") {
    text = (s.exact ? "certified; " : "NOT certified; ") + text;
    if (s.uncertified && s.uncertified->batch != s.next->batch) {
      text += fmt::format("; undecided up to {}", s.uncertified->batch);
    }
    if (!s.exact && s.smallest_infeasible) {
      text += fmt::format("; proven infeasible from {}", *s.smallest_infeasible);
    }
  }
  return text;
}

void WritePlot(const MaxBatchReport& report, const std::string& title, const std::string& path) {
  RenderPlot(MaxBatchPlot(report, title, path));
}

int64_t ParseMemory(const MaxBatchOptions& options) {
  if (!options.memory_text.empty()) {
    SizeSpec spec;
    try {
      spec = ParseSize(options.memory_text);
    } catch (const std::invalid_argument& error) {
      throw UsageError(fmt::format("--memory: {}", error.what()));
    }
    if (spec.percent) throw UsageError("--memory takes a size (16GiB, 16e9), not a percentage");
    return ResolveSize(spec, 0);
  }
  if (!options.zoo.device.empty()) return DeviceByName(options.zoo.device).memory_bytes;
  throw UsageError("give the device memory with --memory SIZE or --device NAME");
}

nlohmann::json SearchJson(const StrategySearch& s, const MaxBatchReport& report) {
  nlohmann::json probes = nlohmann::json::array();
  for (const BatchProbe& p : s.probes) probes.push_back(ProbeJson(p));
  const auto ratio = report.Ratio(s);
  return {{"strategy", s.strategy},
          {"max_batch", s.max_batch},
          {"certified", s.strategy == "optimal" ? nlohmann::json(s.certified())
                                                : nlohmann::json(nullptr)},
          {"next_batch", s.next ? ProbeJson(*s.next) : nlohmann::json(nullptr)},
          {"limit_reached", s.limit_reached},
          {"stopped_at_total_limit", s.stopped_at_total_limit},
          {"ratio_vs_checkpoint_all", ratio ? nlohmann::json(*ratio) : nlohmann::json(nullptr)},
          {"at_max", s.at_max ? ProbeJson(*s.at_max) : nlohmann::json(nullptr)},
          {"best_uncertified", s.uncertified ? ProbeJson(*s.uncertified) : nlohmann::json(nullptr)},
          {"smallest_infeasible_batch", s.smallest_infeasible
                                            ? nlohmann::json(*s.smallest_infeasible)
                                            : nlohmann::json(nullptr)},
          {"search_started_above", s.seeded_from},
          {"probes", probes},
          {"time_s", s.seconds}};
}

const char* CapRule(const MaxBatchOptions& options) {
  return options.max_overhead > 0 ? "--max-overhead" : "one extra forward pass";
}

void PrintJson(const MaxBatchOptions& options, const MaxBatchReport& report, const Graph& one,
               int64_t memory_bytes) {
  nlohmann::json rows = nlohmann::json::array();
  for (const StrategySearch& s : report.results) rows.push_back(SearchJson(s, report));
  const nlohmann::json doc = {
      {"schema", "remat.maxbatch/1"},
      {"model", options.zoo.model},
      {"graph_at_batch_1", GraphSummaryJson(one)},
      {"device_memory_bytes", memory_bytes},
      {"optimizer", OptimizerName(ToOptimizer(options.zoo))},
      {"workspace", WorkspaceOptionName(ChosenWorkspaceModel(options.zoo))},
      {"overhead_cap", report.cap_ratio},
      {"overhead_cap_rule", CapRule(options)},
      {"max_batch_limit", options.max_batch},
      {"checkpoint_all_max_batch", report.reference_batch},
      {"solver", SolverSettingsJson(options.solver)},
      {"results", rows}};
  fmt::print("{}\n", doc.dump(2));
}

void PrintTable(const MaxBatchOptions& options, const MaxBatchReport& report,
                const BatchCase& one, int64_t memory_bytes) {
  PrintWrapped(fmt::format("model: {}; device memory {}; optimizer {}; workspace {}",
                           one.built->graph.name(), FormatBytes(memory_bytes),
                           OptimizerName(ToOptimizer(options.zoo)),
                           WorkspaceOptionName(ChosenWorkspaceModel(options.zoo))));
  PrintWrapped(fmt::format("fixed memory at batch 1: {} (parameters, gradients, optimizer state; "
                           "the input adds {} per sample)",
                           FormatBytes(one.built->fixed_bytes),
                           FormatBytes(one.built->input_bytes)));
  PrintWrapped(fmt::format("a schedule counts when its cost is at most {:.3f}x the no-remat cost "
                           "({}); time limit {:g} s per solver run",
                           report.cap_ratio, CapRule(options), options.solver.time_limit_s));
  fmt::print("\n");
  std::vector<std::vector<std::string>> table;
  std::string stops;
  for (const StrategySearch& s : report.results) {
    const auto ratio = report.Ratio(s);
    table.push_back(
        {s.strategy, std::to_string(s.max_batch) + (s.limit_reached ? "+" : ""),
         ratio ? fmt::format("{:.2f}x", *ratio) : "-",
         s.at_max ? FormatBytes(s.at_max->budget_bytes) : "-",
         s.at_max && s.at_max->peak_bytes ? FormatBytes(*s.at_max->peak_bytes) : "-",
         s.at_max && s.at_max->overhead ? fmt::format("{:.3f}x", *s.at_max->overhead) : "-",
         std::to_string(s.probes.size()), fmt::format("{:.1f}", s.seconds)});
    stops += WrapText(s.strategy + ": " + StopText(s), kTextWidth, "  ", "    ");
  }
  fmt::print("{}", FormatTable({"strategy", "max batch", "vs checkpoint-all", "activation budget",
                                "peak", "overhead", "probes", "time s"},
                               table));
  // The reasons are sentences of any length: below the table, wrapped, not in a column.
  fmt::print("\nwhy the next batch fails:\n{}", stops);
}

void RunMaxBatch(const MaxBatchOptions& options, int& exit_code) {
  if (options.zoo.batch > 0) {
    throw UsageError("maxbatch searches the batch size: leave out --batch");
  }
  CheckPlotPath("--plot", options.plot_path, {});
  if (!options.plot_path.empty()) {
    FindGnuplot();
  }
  const int64_t memory_bytes = ParseMemory(options);
  // --total-time-limit holds for the whole search, building each batch's model included.
  const DeadlineScope deadline(CommandSecondsLeft(TimeLeft(0), options.total_time_limit_s),
                               /*stoppable=*/false);
  MaxBatchSearch search(ZooBatchBuilder(options),
                        {.memory_bytes = memory_bytes, .settings = options.solver,
                         .max_overhead = options.max_overhead, .max_batch = options.max_batch,
                         .total_time_limit_s = options.total_time_limit_s});
  const BatchCase& one = search.Reference();
  const std::vector<std::string> names = ParseStrategyList(options.strategies, one.built->graph);
  ProgressLine progress("maxbatch", 0, ProgressWanted(options.quiet));
  const MaxBatchReport report = search.SearchAll(names, progress.Hooks());
  if (options.json) {
    PrintJson(options, report, one.built->graph, memory_bytes);
  } else {
    PrintTable(options, report, one, memory_bytes);
  }
  if (!options.plot_path.empty()) {
    const std::string title =
        fmt::format("{}: largest batch on {} B ({}), {}", options.zoo.model, memory_bytes,
                    FormatBytes(memory_bytes), OptimizerName(ToOptimizer(options.zoo)));
    WritePlot(report, title, options.plot_path);
    if (!options.json) {
      const PlotFiles files = PlotFilesFor(options.plot_path);
      fmt::print("\nplot written to {} (data {}, script {})\n", files.image, files.data,
                 files.script);
    }
  }
  exit_code = report.any() ? kExitOk : kExitNoFeasibleSchedule;
}

}  // namespace

void AddMaxBatchCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<MaxBatchOptions>();
  CLI::App* command = app.add_subcommand(
      "maxbatch", "the largest batch each strategy fits on a device (paper figure 6)");
  command->add_option("--model", options->zoo.model, "zoo model (remat zoo list)")->required();
  AddZooModelOptions(*command, options->zoo);
  AddWorkspaceOption(*command, options->zoo.workspace, kZooWorkspaceDefault);
  command->add_option("--memory", options->memory_text,
                      "device memory (16GiB, 16e9); or --device NAME for a preset's capacity");
  command->add_option("--strategies,--strategy", options->strategies,
                      "strategy names, comma-separated, or 'all' (default)");
  command->add_option("--max-overhead", options->max_overhead,
                      "count a schedule only if cost <= X times the no-remat cost (default: "
                      "one extra forward pass, the paper's cap)")
      ->check(FiniteRange(1.0, 1e6));
  command->add_option("--max-batch", options->max_batch,
                      "stop the search at this batch (default 65536)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  command->add_option("--total-time-limit", options->total_time_limit_s,
                      "seconds for the whole command: probes get at most what is left, and the "
                      "search reports what it knows when it runs out (default: none)")
      ->check(FiniteRange(0.001, 1e7));
  AddSolverSettingOptions(*command, options->solver);
  command->add_flag("--json", options->json, "machine-readable output (remat.maxbatch/1)");
  command->add_option("--plot", options->plot_path,
                      "bar chart of the batches to FILE.svg or FILE.png (with FILE.dat, FILE.gp)");
  command->add_flag("--quiet", options->quiet, "no progress line on stderr");
  command->callback([options, &exit_code] { RunMaxBatch(*options, exit_code); });
}

}  // namespace remat
