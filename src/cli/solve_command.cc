// remat solve: run one or more strategies on a graph against a budget and compare them.
#include <algorithm>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/load_graph.h"
#include "cli/output.h"
#include "cli/sizes.h"
#include "core/graph_json.h"
#include "core/schedule_json.h"
#include "strategies/checkpoint_all.h"
#include "strategies/registry.h"

namespace remat {
namespace {

struct SolveOptions {
  GraphSource source;
  std::string budget_text;
  std::string strategies = "all";
  std::string output_path;
  bool json = false;
};

std::vector<const StrategySpec*> SelectStrategies(const std::string& list, const Graph& graph) {
  std::vector<const StrategySpec*> chosen;
  if (list == "all") {
    for (const StrategySpec& spec : BaselineStrategies()) {
      if (!spec.needs_training_structure || graph.has_training_structure()) {
        chosen.push_back(&spec);
      }
    }
    return chosen;
  }
  std::stringstream stream(list);
  std::string name;
  while (std::getline(stream, name, ',')) {
    const StrategySpec* spec = FindBaseline(name);
    if (spec == nullptr) {
      std::vector<std::string> names;
      for (const StrategySpec& s : BaselineStrategies()) names.push_back(s.name);
      throw UsageError(fmt::format("unknown strategy '{}'; choose from: all, {}", name,
                                   fmt::join(names, ", ")));
    }
    chosen.push_back(spec);
  }
  if (chosen.empty()) throw UsageError("--strategy lists no strategy");
  return chosen;
}

void RunSolve(const SolveOptions& options, int& exit_code) {
  SizeSpec budget_spec;
  try {
    budget_spec = ParseSize(options.budget_text);
  } catch (const std::invalid_argument& error) {
    throw UsageError(fmt::format("--budget: {}", error.what()));
  }
  const Graph graph = LoadGraphSource(options.source);
  const std::vector<const StrategySpec*> specs = SelectStrategies(options.strategies, graph);
  if (!options.output_path.empty() && specs.size() != 1) {
    throw UsageError("-o/--output saves one schedule: choose a single --strategy");
  }
  const StrategyResult no_remat = CheckpointAll(graph, std::numeric_limits<int64_t>::max());
  const int64_t budget_bytes = ResolveSize(budget_spec, no_remat.peak_bytes);
  const int64_t lower_bound = MinimumPeakLowerBound(graph);

  std::vector<StrategyResult> results;
  for (const StrategySpec* spec : specs) results.push_back(spec->run(graph, budget_bytes));
  const bool any_fits = std::any_of(results.begin(), results.end(), [](const auto& r) {
    return r.status == FitStatus::kFits;
  });
  const std::string below_minimum =
      budget_bytes < lower_bound
          ? fmt::format("the budget {} B is below this graph's minimum peak {} B (the largest "
                        "output plus its inputs): no schedule can fit",
                        budget_bytes, lower_bound)
          : "";

  if (options.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const StrategyResult& r : results) {
      rows.push_back({{"strategy", r.strategy},
                      {"status", r.status == FitStatus::kFits ? "fits" : "over_budget"},
                      {"cost", r.cost},
                      {"overhead", r.cost / no_remat.cost},
                      {"peak_bytes", r.peak_bytes},
                      {"parameters", r.parameters}});
    }
    const nlohmann::json doc = {
        {"schema", "remat.solve/1"},
        {"graph", {{"name", graph.name()}, {"nodes", graph.size()},
                   {"edges", graph.edges().size()}, {"cost_unit", graph.cost_unit()},
                   {"fingerprint", GraphFingerprint(graph)}}},
        {"budget_bytes", budget_bytes},
        {"no_remat_cost", no_remat.cost},
        {"no_remat_peak_bytes", no_remat.peak_bytes},
        {"min_peak_lower_bound_bytes", lower_bound},
        {"results", rows}};
    fmt::print("{}\n", doc.dump(2));
  } else {
    fmt::print("graph: {} ({} nodes, {} edges, costs in {})\n",
               graph.name().empty() ? options.source.graph_path : graph.name(), graph.size(),
               graph.edges().size(), graph.cost_unit());
    fmt::print("activation budget: {} ({} B, {:.1f}% of the no-remat peak {})\n",
               FormatBytes(budget_bytes), budget_bytes,
               100.0 * static_cast<double>(budget_bytes) /
                   static_cast<double>(std::max<int64_t>(1, no_remat.peak_bytes)),
               FormatBytes(no_remat.peak_bytes));
    std::vector<std::vector<std::string>> rows;
    for (const StrategyResult& r : results) {
      rows.push_back({r.strategy, FitStatusName(r.status), fmt::format("{:.6g}", r.cost),
                      fmt::format("{:.3f}x", r.cost / no_remat.cost), FormatBytes(r.peak_bytes),
                      r.parameters});
    }
    fmt::print("\n{}", FormatTable({"strategy", "status", "cost", "overhead", "peak", "choice"},
                                   rows));
    if (!below_minimum.empty()) fmt::print("\n{}\n", below_minimum);
  }
  if (!below_minimum.empty() && options.json) fmt::print(stderr, "remat: {}\n", below_minimum);
  if (!options.output_path.empty()) {
    const StrategyResult& r = results.front();
    SaveScheduleFile(graph, r.schedule,
                     {.strategy = r.strategy, .cost = r.cost, .peak_bytes = r.peak_bytes,
                      .budget_bytes = budget_bytes},
                     options.output_path);
    if (!options.json) fmt::print("schedule written to {}\n", options.output_path);
  }
  exit_code = any_fits ? kExitOk : kExitNoFeasibleSchedule;
}

}  // namespace

void AddSolveCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<SolveOptions>();
  CLI::App* solve = app.add_subcommand("solve", "plan a training step within a memory budget");
  AddGraphSourceOptions(*solve, options->source);
  solve->add_option("--budget", options->budget_text,
                    "activation budget: bytes, 16GiB, 512MB, or 60% of the no-remat peak")
      ->required();
  solve->add_option("--strategy", options->strategies,
                    "strategy name, comma-separated list, or 'all' (default)");
  solve->add_option("-o,--output", options->output_path,
                    "save the schedule (JSON) of the single chosen strategy");
  solve->add_flag("--json", options->json, "machine-readable output");
  solve->callback([options, &exit_code] { RunSolve(*options, exit_code); });
}

}  // namespace remat
