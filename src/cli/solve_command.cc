// remat solve: run strategies on a graph against a budget and compare them with the LP bound.
#include "cli/solve_command.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/budget_sweep.h"
#include "cli/commands.h"
#include "cli/load_graph.h"
#include "cli/output.h"
#include "core/sizes.h"
#include "solvers/strategy_runner.h"
#include "core/graph_json.h"
#include "core/schedule_json.h"
#include "solvers/checkmate_solver.h"
#include "solvers/lower_bound.h"
#include "strategies/checkpoint_all.h"

namespace remat {
namespace {

struct SolveOptions {
  GraphSource source;
  BudgetArgs budget;
  std::string strategies = "all";
  std::string output_path;
  SolverSettings solver;
  bool lower_bound = true;
  bool json = false;
  bool quiet = false;
};

std::string Gap(const StrategyRow& row, const std::optional<double>& bound) {
  if (!row.fits() || !bound || row.result->cost <= 0) return "-";
  return FormatPercent(std::max(0.0, row.result->cost - *bound), row.result->cost);
}

nlohmann::json RowJson(const StrategyRow& row, double no_remat_cost,
                       const std::optional<double>& bound) {
  nlohmann::json j = {{"strategy", row.strategy},
                      {"solve_time_s", row.seconds},
                      {"note", row.note}};
  if (!row.solver_status.empty()) j["solver_status"] = row.solver_status;
  if (row.own_bound) j["solver_lower_bound"] = *row.own_bound;
  if (!row.result) {
    j["status"] = "no_schedule";
    return j;
  }
  const StrategyResult& r = *row.result;
  j["status"] = r.status == FitStatus::kFits ? "fits" : "over_budget";
  j["cost"] = r.cost;
  j["overhead"] = r.cost / no_remat_cost;
  j["peak_bytes"] = r.peak_bytes;
  j["parameters"] = r.parameters;
  if (bound && r.cost > 0 && row.fits()) j["gap_to_lower_bound"] = std::max(0.0, r.cost - *bound) / r.cost;
  return j;
}

void RunSolve(const SolveOptions& options, int& exit_code) {
  const LoadedGraph loaded = LoadGraphSource(options.source);
  const Graph& graph = loaded.graph;
  const std::vector<std::string> names = ParseStrategyList(options.strategies, graph);
  if (!options.output_path.empty() && names.size() != 1) {
    throw UsageError("-o/--output saves one schedule: choose a single --strategy");
  }
  const StrategyResult no_remat = CheckpointAll(graph, std::numeric_limits<int64_t>::max());
  const Budget budget = ResolveBudget(options.budget, options.source, loaded, no_remat.peak_bytes);
  const int64_t budget_bytes = budget.activation_bytes;
  const int64_t min_peak = MinimumPeakLowerBound(graph);
  SolverSettings settings = options.solver;
  settings.progress = !options.quiet && ::isatty(STDERR_FILENO);

  std::optional<double> bound;
  std::string bound_note;
  std::string bound_source;
  if (options.lower_bound) {
    const BestBound best = BestLowerBound(
        graph, budget_bytes,
        {.time_limit_s = settings.time_limit_s, .threads = settings.threads, .verbose = settings.verbose});
    if (best.status == SolveStatus::kInfeasible) {
      bound_note = fmt::format("none: no schedule fits ({}: {})", best.source, best.note);
    } else {
      bound = best.cost;
      bound_source = best.source;
      bound_note = fmt::format("{:.6g} ({}; {}; {:.2f} s)", best.cost, best.source, best.note,
                               best.seconds);
    }
  }
  std::vector<StrategyRow> rows;
  SharedWork shared;  // the roundings solve their LP once; optimal reuses the bound
  shared.lower_bound = bound;
  for (const std::string& name : names) {
    rows.push_back(RunStrategy(name, graph, budget_bytes, settings, &shared));
  }
  const bool any_fits = std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.fits(); });
  const std::string below_minimum =
      budget_bytes < min_peak
          ? fmt::format("the budget {} B is below this graph's minimum peak {} B (the largest "
                        "output plus its inputs): no schedule can fit",
                        budget_bytes, min_peak)
          : "";

  if (options.json) {
    nlohmann::json results = nlohmann::json::array();
    for (const StrategyRow& row : rows) results.push_back(RowJson(row, no_remat.cost, bound));
    nlohmann::json doc = {
        {"schema", "remat.solve/2"},
        {"graph", {{"name", graph.name()}, {"nodes", graph.size()},
                   {"edges", graph.edges().size()}, {"cost_unit", graph.cost_unit()},
                   {"fingerprint", GraphFingerprint(graph)}}},
        {"budget_bytes", budget_bytes},
        {"device_memory_bytes",
         budget.device_bytes ? nlohmann::json(*budget.device_bytes) : nlohmann::json(nullptr)},
        {"fixed_memory_bytes", budget.fixed_bytes},
        {"no_remat_cost", no_remat.cost},
        {"no_remat_peak_bytes", no_remat.peak_bytes},
        {"min_peak_lower_bound_bytes", min_peak},
        {"lower_bound_cost", bound ? nlohmann::json(*bound) : nlohmann::json(nullptr)},
        {"lower_bound_source", bound ? nlohmann::json(bound_source) : nlohmann::json(nullptr)},
        {"solver", {{"time_limit_s", settings.time_limit_s}, {"threads", settings.threads},
                    {"relative_gap", settings.relative_gap}, {"seed", settings.seed},
                    {"eps", settings.eps}, {"rounds", settings.rounds}}},
        {"results", results}};
    fmt::print("{}\n", doc.dump(2));
    if (!below_minimum.empty()) fmt::print(stderr, "remat: {}\n", below_minimum);
  } else {
    fmt::print("graph: {} ({} nodes, {} edges, costs in {})\n",
               graph.name().empty() ? options.source.Describe() : graph.name(), graph.size(),
               graph.edges().size(), graph.cost_unit());
    if (loaded.fixed) {
      const FixedMemory& f = *loaded.fixed;
      fmt::print("fixed memory: {} = parameters {} + gradients {} + optimizer {} + input {}\n",
                 FormatBytes(f.total_bytes()), FormatBytes(f.parameter_bytes),
                 FormatBytes(f.gradient_bytes), FormatBytes(f.optimizer_bytes),
                 FormatBytes(f.input_bytes));
    }
    fmt::print("activation budget: {}, {:.1f}% of the no-remat peak {}\n", budget.Describe(),
               100.0 * static_cast<double>(budget_bytes) /
                   static_cast<double>(std::max<int64_t>(1, no_remat.peak_bytes)),
               FormatBytes(no_remat.peak_bytes));
    if (options.lower_bound) fmt::print("cost lower bound: {}\n", bound_note);
    std::vector<std::vector<std::string>> table;
    for (const StrategyRow& row : rows) {
      const std::string status =
          row.result ? FitStatusName(row.result->status)
                     : "no schedule (" + row.solver_status + ")";
      table.push_back(
          {row.strategy, status,
           row.result ? fmt::format("{:.6g}", row.result->cost) : "-",
           row.result ? FormatRatio(row.result->cost, no_remat.cost) : "-",
           Gap(row, bound), row.result ? FormatBytes(row.result->peak_bytes) : "-",
           fmt::format("{:.2f}", row.seconds),
           row.result ? row.result->parameters : row.note});
    }
    fmt::print("\n{}", FormatTable({"strategy", "status", "cost", "overhead", "gap", "peak",
                                    "time s", "choice"},
                                   table));
    if (!below_minimum.empty()) fmt::print("\n{}\n", below_minimum);
  }
  if (!options.output_path.empty()) {
    const StrategyRow& row = rows.front();
    if (!row.result) {
      fmt::print(stderr, "remat: {} found no schedule; {} not written\n", row.strategy,
                 options.output_path);
    } else {
      const StrategyResult& r = *row.result;
      SaveScheduleFile(graph, r.schedule,
                       {.strategy = r.strategy, .cost = r.cost, .peak_bytes = r.peak_bytes,
                        .budget_bytes = budget_bytes, .solver_status = row.solver_status,
                        .lower_bound_cost = bound},
                       options.output_path);
      if (!options.json) fmt::print("schedule written to {}\n", options.output_path);
    }
  }
  exit_code = any_fits ? kExitOk : kExitNoFeasibleSchedule;
}

}  // namespace

void AddSolveCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<SolveOptions>();
  CLI::App* solve = app.add_subcommand("solve", "plan a training step within a memory budget");
  AddGraphSourceOptions(*solve, options->source);
  AddBudgetOptions(*solve, options->budget);
  solve->add_option("--strategy,--strategies", options->strategies,
                    "strategy name, comma-separated list, or 'all' (default)");
  solve->add_option("-o,--output", options->output_path,
                    "save the schedule (JSON) of the single chosen strategy")
      ->check(kOutputPath);
  AddSolverSettingOptions(*solve, options->solver);
  solve->add_flag("!--no-mip-start", options->solver.mip_start,
                  "optimal: do not seed the whole MILP with the local-search schedule (small "
                  "models; the window search always starts from it)");
  solve->add_flag("!--no-lower-bound", options->lower_bound,
                  "skip the lower bound (absence-gap and LP relaxation)");
  solve->add_flag("--quiet", options->quiet, "no progress line on stderr");
  solve->add_flag("--json", options->json, "machine-readable output");
  solve->callback([options, &exit_code] { RunSolve(*options, exit_code); });
}

}  // namespace remat
