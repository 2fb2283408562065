// remat solve: run strategies on a graph against a budget and compare them with the LP bound.
#include "cli/solve_command.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/load_graph.h"
#include "cli/output.h"
#include "cli/output_paths.h"
#include "cli/planning_options.h"
#include "core/graph_json.h"
#include "core/schedule_json.h"
#include "core/sizes.h"
#include "planning/plan_report.h"
#include "solvers/solver_types.h"

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

std::string Gap(const PlanReport& report, const StrategyRow& row) {
  const std::optional<double> gap = report.Gap(row);
  return gap ? FormatPercent(*gap, 1.0) : "-";
}

// The solve document's row: the sweep's row, with the note always present (schema 2).
nlohmann::json RowJson(const PlanReport& report, const StrategyRow& row) {
  nlohmann::json j =
      StrategyRowJson(row, report.no_remat.cost, report.lower_bound(), report.relative_gap);
  j["note"] = row.note;
  return j;
}

// Why no row fits, with the sizes that tell what would: the minimum peak (a lower bound on
// every schedule's peak) and the smallest peak of a schedule found. Empty when a row fits.
std::string NoFitText(const PlanReport& report) {
  if (report.any_fits()) return "";
  const int64_t budget = report.budget.activation_bytes;
  std::string text;
  if (report.below_minimum_peak()) {
    const auto [budget_text, minimum_text] = FormatBytesApart(budget, report.min_peak_bytes);
    text = fmt::format("the budget {} is below this graph's minimum peak {} (the largest output "
                       "plus its inputs): no schedule can fit",
                       budget_text, minimum_text);
  } else {
    text = fmt::format("no strategy found a schedule within the budget {}", FormatBytes(budget));
  }
  if (report.min_budget) {
    // The smallest budget's line says which schedule reaches it: one figure, not two.
    return text + fmt::format("; the smallest budget was found by {}, not by a listed "
                              "strategy (optimal starts from that schedule)",
                              report.min_budget->found_by);
  }
  if (const std::optional<int64_t> smallest = report.SmallestPeakFound()) {
    text += fmt::format("; the smallest budget for which remat found a schedule is {}",
                        FormatBytesApart(budget, *smallest).second);
  }
  return text + "; --budget min searches for the smallest budget";
}

// The smallest budget's line: what was found, by what, and what no schedule can go below.
std::string MinBudgetText(const MinBudget& m) {
  const auto [peak, bound] = FormatBytesApart(m.peak_bytes, m.lower_bound_bytes);
  return fmt::format("smallest budget: {}{}, found by {}; no schedule peaks below {} ({}); "
                     "gap {}; searched {:.1f} s: {}",
                     peak, m.peak_bytes < 1024 ? "" : fmt::format(" ({} B)", m.peak_bytes),
                     m.found_by, bound, m.bound_source,
                     FormatPercent(m.gap(), 1.0), m.seconds, m.note);
}

nlohmann::json MinBudgetJson(const MinBudget& m) {
  return {{"peak_bytes", m.peak_bytes}, {"lower_bound_bytes", m.lower_bound_bytes},
          {"gap", m.gap()}, {"bound_source", m.bound_source}, {"found_by", m.found_by},
          {"note", m.note}, {"seconds", m.seconds}};
}

std::string BoundText(const BestBound& best) {
  if (best.status == SolveStatus::kInfeasible) {
    return fmt::format("none: no schedule fits ({}: {})", best.source, best.note);
  }
  return fmt::format("{:.6g} ({}; {}; {:.2f} s)", best.cost, best.source, best.note, best.seconds);
}

void PrintJson(const LoadedGraph& loaded, const PlanReport& report, const SolverSettings& settings) {
  const Graph& graph = loaded.graph;
  nlohmann::json results = nlohmann::json::array();
  for (const StrategyRow& row : report.rows) results.push_back(RowJson(report, row));
  const std::optional<double> bound = report.lower_bound();
  const Budget& budget = report.budget;
  nlohmann::json doc = {
      {"schema", "remat.solve/2"},
      {"graph", {{"name", graph.name()}, {"nodes", graph.size()},
                 {"edges", graph.edges().size()}, {"cost_unit", graph.cost_unit()},
                 {"fingerprint", GraphFingerprint(graph)}}},
      {"budget_bytes", budget.activation_bytes},
      {"device_memory_bytes",
       budget.device_bytes ? nlohmann::json(*budget.device_bytes) : nlohmann::json(nullptr)},
      {"fixed_memory_bytes", budget.fixed_bytes},
      {"no_remat_cost", report.no_remat.cost},
      {"no_remat_peak_bytes", report.no_remat.peak_bytes},
      {"min_peak_lower_bound_bytes", report.min_peak_bytes},
      {"smallest_peak_found_bytes", report.SmallestPeakFound()
                                        ? nlohmann::json(*report.SmallestPeakFound())
                                        : nlohmann::json(nullptr)},
      {"lower_bound_cost", bound ? nlohmann::json(*bound) : nlohmann::json(nullptr)},
      {"lower_bound_source",
       bound ? nlohmann::json(report.bound->source) : nlohmann::json(nullptr)},
      {"solver", {{"time_limit_s", settings.time_limit_s}, {"threads", settings.threads},
                  {"relative_gap", settings.relative_gap},
                  {"patience_s", settings.patience_s}, {"seed", settings.seed},
                  {"eps", settings.eps}, {"rounds", settings.rounds}}},
      {"results", results}};
  if (report.min_budget) doc["min_budget"] = MinBudgetJson(*report.min_budget);
  fmt::print("{}\n", doc.dump(2));
  if (!report.any_fits()) fmt::print(stderr, "remat: {}\n", NoFitText(report));
}

// A row's status: what is proven (optimal, or within the gap target), else within the budget
// or not, or why none.
std::string StatusText(const PlanReport& report, const StrategyRow& row) {
  const RowVerdict verdict = report.Verdict(row);
  if (verdict != RowVerdict::kNoSchedule) return RowVerdictText(verdict, report.relative_gap);
  return fmt::format("no schedule ({})", SolveStatusPhrase(row.solver_status));
}

void PrintTable(const SolveOptions& options, const LoadedGraph& loaded, const PlanReport& report) {
  const Graph& graph = loaded.graph;
  PrintWrapped(fmt::format("graph: {} ({} nodes, {} edges, costs in {})",
                           graph.name().empty() ? options.source.Describe() : graph.name(),
                           graph.size(), graph.edges().size(), graph.cost_unit()));
  if (loaded.fixed) {
    const FixedMemory& f = *loaded.fixed;
    PrintWrapped(fmt::format("fixed memory: {} = parameters {} + gradients {} + optimizer {} + "
                             "input {}",
                             FormatBytes(f.total_bytes()), FormatBytes(f.parameter_bytes),
                             FormatBytes(f.gradient_bytes), FormatBytes(f.optimizer_bytes),
                             FormatBytes(f.input_bytes)));
  }
  const double percent = 100.0 * static_cast<double>(report.budget.activation_bytes) /
                         static_cast<double>(std::max<int64_t>(1, report.no_remat.peak_bytes));
  PrintWrapped(fmt::format("activation budget: {}, {:.1f}% of the no-remat peak {}",
                           report.budget.Describe(), percent,
                           FormatBytes(report.no_remat.peak_bytes)));
  if (report.min_budget) PrintWrapped(MinBudgetText(*report.min_budget));
  if (report.bound) PrintWrapped("cost lower bound: " + BoundText(*report.bound));
  std::vector<std::vector<std::string>> table;
  std::string choices;
  for (const StrategyRow& row : report.rows) {
    table.push_back({row.strategy, StatusText(report, row),
                     row.result ? fmt::format("{:.6g}", row.result->cost) : "-",
                     row.result ? FormatRatio(row.result->cost, report.no_remat.cost) : "-",
                     Gap(report, row), row.result ? FormatBytes(row.result->peak_bytes) : "-",
                     fmt::format("{:.2f}", row.seconds)});
    std::string choice = row.result ? row.result->parameters : row.note;
    if (!row.stop_reason.empty()) choice += fmt::format(" (stopped: {})", row.stop_reason);
    if (!choice.empty()) {
      choices += WrapText(row.strategy + ": " + choice, kTextWidth, "  ", "    ");
    }
  }
  fmt::print("\n{}", FormatTable({"strategy", "status", "cost", "overhead", "gap", "peak",
                                  "time s"},
                                 table));
  // The choices are sentences of any length: below the table, wrapped, not in a column.
  if (!choices.empty()) fmt::print("\nhow each strategy chose its schedule:\n{}", choices);
  if (!report.any_fits()) {
    fmt::print("\n");
    PrintWrapped(NoFitText(report));
  }
}

// Saves the cheapest schedule within the budget, and only a row the table shows: a file that
// remat-run would execute over its budget is never written, nor a schedule no row reported
// (with --budget min, the search's own when no listed strategy fits).
void SaveSchedule(const SolveOptions& options, const Graph& graph, const PlanReport& report) {
  const StrategyRow* best = report.Best();
  if (best == nullptr) {
    fmt::print(stderr, "remat: no listed strategy has a schedule within the budget; {} not "
               "written\n", options.output_path);
    return;
  }
  const StrategyResult& r = *best->result;
  SaveScheduleFile(graph, r.schedule,
                   {.strategy = r.strategy, .cost = r.cost, .peak_bytes = r.peak_bytes,
                    .budget_bytes = report.budget.activation_bytes,
                    .solver_status = best->solver_status,
                    .lower_bound_cost = report.lower_bound()},
                   options.output_path);
  if (options.json) return;
  if (report.rows.size() == 1) {
    fmt::print("schedule written to {}\n", options.output_path);
  } else {
    fmt::print("schedule of {}, the cheapest within the budget, written to {}\n", r.strategy,
               options.output_path);
  }
}

void RunSolve(const SolveOptions& options, int& exit_code) {
  const TimeLeft command(0);  // from the start: loading the model is part of the limit
  CheckOutputPath("-o", options.output_path, options.source.Files());
  const LoadedGraph loaded = LoadGraphSource(options.source);
  const Graph& graph = loaded.graph;
  const std::vector<std::string> names = ParseStrategyList(options.strategies, graph);
  SolverSettings settings = options.solver;
  settings.progress = !options.quiet && ::isatty(STDERR_FILENO);
  // --time-limit for each strategy, for the bound and for the smallest-budget search: the
  // command's whole work, loading included, keeps their sum (docs/cli.md).
  const int runs = static_cast<int>(names.size()) + (options.lower_bound ? 1 : 0) +
                   (IsMinBudget(options.budget.budget_text) ? 1 : 0);
  const DeadlineScope deadline(CommandSecondsLeft(command, settings.time_limit_s * runs),
                               /*stoppable=*/false);
  const PlanReport report =
      PlanAtBudget(graph, ToBudgetRequest(options.budget, options.source, loaded),
                   {.strategies = names, .settings = settings, .lower_bound = options.lower_bound});
  if (options.json) {
    PrintJson(loaded, report, settings);
  } else {
    PrintTable(options, loaded, report);
  }
  if (!options.output_path.empty()) SaveSchedule(options, graph, report);
  exit_code = report.any_fits() ? kExitOk : kExitNoFeasibleSchedule;
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
                    "save the cheapest schedule within the budget (JSON); none is written "
                    "when no schedule fits")
      ->check(kOutputPath);
  AddSolverSettingOptions(*solve, options->solver);
  solve->add_flag("!--no-mip-start", options->solver.mip_start,
                  "optimal: do not seed the whole MILP with its start, local-search's schedule "
                  "or a better one another strategy found (small models; the window search "
                  "always starts from it)");
  solve->add_flag("!--no-lower-bound", options->lower_bound,
                  "skip the lower bound (absence-gap and LP relaxation)");
  solve->add_flag("--quiet", options->quiet, "no progress line on stderr");
  solve->add_flag("--json", options->json, "machine-readable output");
  solve->callback([options, &exit_code] { RunSolve(*options, exit_code); });
}

}  // namespace remat
