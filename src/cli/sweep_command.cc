// remat sweep: every strategy over a range of activation budgets, from the graph's minimum
// peak to its no-remat peak (the paper's figure 5), as a table, JSON, CSV and a plot.
#include "cli/sweep_command.h"

#include <algorithm>
#include <limits>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/planning_options.h"
#include "cli/commands.h"
#include "cli/gnuplot.h"
#include "cli/load_graph.h"
#include "cli/output.h"
#include "cli/output_paths.h"
#include "cli/progress.h"
#include "cli/sweep_plot.h"
#include "core/sizes.h"
#include "planning/strategy_runner.h"
#include "strategies/checkpoint_all.h"

namespace remat {
namespace {

struct SweepOptions {
  GraphSource source;
  BudgetRange range;
  std::string strategies = "all";
  SolverSettings solver{.time_limit_s = 60};
  double total_time_limit_s = 0;  // the whole command; 0: none
  bool lower_bound = true;
  bool json = false;
  bool csv = false;
  bool quiet = false;
  std::string plot_path;
};

struct SweepResult {
  const Graph* graph = nullptr;
  std::string source;
  StrategyResult no_remat;
  int64_t min_peak_bytes = 0;
  std::vector<std::string> strategies;
  std::vector<SweepPoint> points;
};

double Percent(int64_t bytes, int64_t reference) {
  return 100.0 * static_cast<double>(bytes) / static_cast<double>(std::max<int64_t>(1, reference));
}

std::string OverheadText(const StrategyRow& row, double no_remat_cost) {
  if (!row.fits()) return "-";
  return FormatRatio(row.result->cost, no_remat_cost);
}

void PrintTable(const SweepResult& sweep, const SweepOptions& options) {
  const Graph& graph = *sweep.graph;
  const double base_cost = sweep.no_remat.cost;
  PrintWrapped(fmt::format("graph: {} ({} nodes, {} edges, costs in {})",
                           graph.name().empty() ? sweep.source : graph.name(), graph.size(),
                           graph.edges().size(), graph.cost_unit()));
  const auto [peak_text, minimum_text] =
      FormatBytesApart(sweep.no_remat.peak_bytes, sweep.min_peak_bytes);
  PrintWrapped(fmt::format("no-remat schedule: cost {:.6g}, peak {}; minimum-peak lower bound {}",
                           base_cost, peak_text, minimum_text));
  const auto [from_text, to_text] =
      FormatBytesApart(sweep.points.front().budget_bytes, sweep.points.back().budget_bytes);
  PrintWrapped(fmt::format("budgets: {} from {} to {}; time limit {:g} s per solver run",
                           sweep.points.size(), from_text, to_text, options.solver.time_limit_s));
  fmt::print("\n");

  std::vector<std::vector<std::string>> rows;
  for (const SweepPoint& point : sweep.points) {
    bool first = true;
    for (const StrategyRow& row : point.rows) {
      const RowVerdict verdict = VerdictOf(row, point.lower_bound, options.solver.relative_gap);
      const std::string status =
          verdict != RowVerdict::kNoSchedule
              ? RowVerdictText(verdict, options.solver.relative_gap)
              : "no schedule (" + SolveStatusPhrase(row.solver_status) + ")";
      const auto gap = GapToBound(row, point.lower_bound);
      rows.push_back(
          {first ? FormatBytes(point.budget_bytes) : "",
           first ? fmt::format("{:.1f}%", Percent(point.budget_bytes, sweep.no_remat.peak_bytes))
                 : "",
           row.strategy, status, row.result ? fmt::format("{:.6g}", row.result->cost) : "-",
           row.result ? FormatRatio(row.result->cost, base_cost) : "-",
           gap ? fmt::format("{:.1f}%", 100 * *gap) : "-",
           row.result ? FormatBytes(row.result->peak_bytes) : "-",
           fmt::format("{:.2f}", row.seconds)});
      first = false;
    }
  }
  fmt::print("{}", FormatTable({"budget", "of peak", "strategy", "status", "cost", "overhead",
                                "gap", "peak", "time s"},
                               rows));

  // The same numbers at a glance: overhead per strategy, '-' where it does not fit.
  std::vector<std::string> header = {"budget", "bound"};
  header.insert(header.end(), sweep.strategies.begin(), sweep.strategies.end());
  std::vector<std::vector<std::string>> summary;
  for (const SweepPoint& point : sweep.points) {
    std::vector<std::string> line = {
        FormatBytes(point.budget_bytes),
        point.lower_bound ? FormatRatio(*point.lower_bound, base_cost) : "-"};
    for (const StrategyRow& row : point.rows) line.push_back(OverheadText(row, base_cost));
    summary.push_back(std::move(line));
  }
  fmt::print("\noverhead (cost / no-remat cost) by budget; '-': no schedule within the budget\n{}",
             FormatTableWithin(header, summary, kTextWidth, 2));
}

nlohmann::json ToJson(const SweepResult& sweep, const SweepOptions& options) {
  nlohmann::json points = nlohmann::json::array();
  for (const SweepPoint& point : sweep.points) {
    nlohmann::json results = nlohmann::json::array();
    for (const StrategyRow& row : point.rows) {
      results.push_back(StrategyRowJson(row, sweep.no_remat.cost, point.lower_bound,
                                        options.solver.relative_gap));
    }
    points.push_back(
        {{"budget_bytes", point.budget_bytes},
         {"budget_fraction_of_no_remat_peak",
          static_cast<double>(point.budget_bytes) / static_cast<double>(sweep.no_remat.peak_bytes)},
         {"lower_bound_cost",
          point.lower_bound ? nlohmann::json(*point.lower_bound) : nlohmann::json(nullptr)},
         {"lower_bound_overhead", point.lower_bound
                                      ? nlohmann::json(*point.lower_bound / sweep.no_remat.cost)
                                      : nlohmann::json(nullptr)},
         {"lower_bound_status", point.lower_bound_status},
         {"lower_bound_time_s", point.lower_bound_seconds},
         {"results", results}});
  }
  return {{"schema", "remat.sweep/2"},
          {"graph", GraphSummaryJson(*sweep.graph)},
          {"no_remat_cost", sweep.no_remat.cost},
          {"no_remat_peak_bytes", sweep.no_remat.peak_bytes},
          {"min_peak_lower_bound_bytes", sweep.min_peak_bytes},
          {"strategies", sweep.strategies},
          {"solver", SolverSettingsJson(options.solver)},
          {"points", points}};
}

void PrintCsv(const SweepResult& sweep) {
  fmt::print(
      "budget_bytes,budget_fraction_of_no_remat_peak,strategy,status,solver_status,cost,overhead,"
      "peak_bytes,lower_bound_cost,gap_to_lower_bound,solve_time_s\n");
  for (const SweepPoint& point : sweep.points) {
    for (const StrategyRow& row : point.rows) {
      const bool has = row.result.has_value();
      fmt::print("{},{:.10g},{},{},{},{},{},{},{},{},{:.3f}\n", point.budget_bytes,
                 static_cast<double>(point.budget_bytes) /
                     static_cast<double>(sweep.no_remat.peak_bytes),
                 row.strategy, RowStatus(row), row.solver_status,
                 has ? fmt::format("{:.10g}", row.result->cost) : "",
                 has ? fmt::format("{:.10g}", row.result->cost / sweep.no_remat.cost) : "",
                 has ? std::to_string(row.result->peak_bytes) : "",
                 NumberOrMissing(point.lower_bound, ""),
                 NumberOrMissing(GapToBound(row, point.lower_bound), ""), row.seconds);
    }
  }
}

void WritePlot(const SweepResult& sweep, const std::string& path) {
  RenderPlot(SweepPlot({.image_path = path,
                        .graph_name = sweep.graph->name(),
                        .no_remat_cost = sweep.no_remat.cost},
                       sweep.strategies, sweep.points));
}

void RunSweep(const SweepOptions& options, int& exit_code) {
  if (options.json && options.csv) throw UsageError("give either --json or --csv, not both");
  CheckPlotPath("--plot", options.plot_path, options.source.Files());
  if (!options.plot_path.empty()) {
    FindGnuplot();  // fail before the long part
  }
  const TimeLeft command(0);  // from the start: loading the model is part of the limit
  const LoadedGraph loaded = LoadGraphSource(options.source);
  const Graph& graph = loaded.graph;
  SweepResult sweep;
  sweep.graph = &graph;
  sweep.source = options.source.Describe();
  sweep.strategies = ParseStrategyList(options.strategies, graph);
  sweep.no_remat = CheckpointAll(graph, std::numeric_limits<int64_t>::max());
  sweep.min_peak_bytes = MinimumPeakLowerBound(graph);
  const std::vector<int64_t> budgets =
      ResolveBudgetGrid(options.range, graph, sweep.no_remat.peak_bytes);
  const size_t runs = SweepWorkItems(budgets.size(), sweep.strategies.size(), options.lower_bound);
  // --total-time-limit, else --time-limit for each strategy run and bound (docs/cli.md).
  const DeadlineScope deadline(
      CommandSecondsLeft(command, options.total_time_limit_s > 0
                                      ? options.total_time_limit_s
                                      : options.solver.time_limit_s * static_cast<double>(runs)),
      /*stoppable=*/false);
  ProgressLine progress("sweep", runs, ProgressWanted(options.quiet));
  sweep.points = RunBudgetSweep(graph, budgets, sweep.strategies, options.solver,
                                options.lower_bound, progress.Hooks(), options.total_time_limit_s);
  if (options.json) {
    fmt::print("{}\n", ToJson(sweep, options).dump(2));
  } else if (options.csv) {
    PrintCsv(sweep);
  } else {
    PrintTable(sweep, options);
  }
  if (!options.plot_path.empty()) {
    WritePlot(sweep, options.plot_path);
    if (!options.json && !options.csv) {
      const PlotFiles files = PlotFilesFor(options.plot_path);
      fmt::print("\nplot written to {} (data {}, script {})\n", files.image, files.data,
                 files.script);
    }
  }
  bool any_fits = false;
  for (const SweepPoint& point : sweep.points) {
    for (const StrategyRow& row : point.rows) any_fits = any_fits || row.fits();
  }
  exit_code = any_fits ? kExitOk : kExitNoFeasibleSchedule;
}

}  // namespace

void AddSweepCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<SweepOptions>();
  CLI::App* sweep = app.add_subcommand(
      "sweep", "every strategy over a range of budgets: overhead vs memory (paper figure 5)");
  AddGraphSourceOptions(*sweep, options->source);
  AddBudgetRangeOptions(*sweep, options->range);
  sweep->add_option("--strategies,--strategy", options->strategies,
                    "strategy names, comma-separated, or 'all' (default)");
  AddSolverSettingOptions(*sweep, options->solver);
  sweep->add_option("--total-time-limit", options->total_time_limit_s,
                    "seconds for the whole sweep: no run gets more than what is left, and rows "
                    "after it is spent are skipped (default: none)")
      ->check(FiniteRange(0.001, 1e7));
  sweep->add_flag("!--no-lower-bound", options->lower_bound, "skip the LP lower bound");
  sweep->add_flag("--json", options->json, "machine-readable output (remat.sweep/1)");
  sweep->add_flag("--csv", options->csv, "one CSV row per budget and strategy");
  sweep->add_option("--plot", options->plot_path,
                    "draw overhead vs budget to FILE.svg or FILE.png (with FILE.dat, FILE.gp)");
  sweep->add_flag("--quiet", options->quiet, "no progress line on stderr");
  sweep->callback([options, &exit_code] { RunSweep(*options, exit_code); });
}

}  // namespace remat
