// remat approx-report: the LP-rounding approximation against the optimum over a budget range
// (the paper's figure 7): optimal cost, deterministic rounding, randomized rounding (best of
// K draws) and the LP lower bound, with their ratios.
#include "cli/approx_report_command.h"

#include <algorithm>
#include <limits>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/planning_options.h"
#include "cli/commands.h"
#include "cli/gnuplot.h"
#include "cli/plot_styles.h"
#include "cli/sweep_plot.h"
#include "cli/load_graph.h"
#include "cli/output.h"
#include "cli/output_paths.h"
#include "cli/progress.h"
#include "core/sizes.h"
#include "planning/strategy_runner.h"
#include "strategies/checkpoint_all.h"

namespace remat {
namespace {

// Indices into SweepPoint::rows.
constexpr size_t kOptimal = 0;
constexpr size_t kDeterministic = 1;
constexpr size_t kRandomized = 2;
const std::vector<std::string> kStrategies = {"optimal", "approx", "approx-randomized"};

struct ApproxOptions {
  GraphSource source;
  BudgetRange range{.points = 8};
  SolverSettings solver{.time_limit_s = 60};
  bool json = false;
  bool quiet = false;
  std::string plot_path;
};

std::optional<double> Cost(const StrategyRow& row) {
  return row.fits() ? std::optional<double>(row.result->cost) : std::nullopt;
}

std::optional<double> Divide(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b || *b <= 0) return std::nullopt;
  return *a / *b;
}

std::optional<double> Scale(const std::optional<double>& a, double by) {
  return a ? std::optional<double>(*a / by) : std::nullopt;
}

std::string Ratio(const std::optional<double>& ratio) {
  return ratio ? fmt::format("{:.3f}", *ratio) : "-";
}

std::string CostCell(const StrategyRow& row, double base_cost) {
  if (row.fits()) return fmt::format("{:.3f}x", row.result->cost / base_cost);
  if (row.result) return "over budget";
  return SolveStatusPhrase(row.solver_status);
}

// Ratios of one rounding to the optimum over the budgets where both fit.
struct RatioSummary {
  int32_t both = 0;        // budgets where the optimum and the rounding fit
  int32_t missed = 0;      // budgets where the optimum fits and the rounding does not
  double mean = 0;
  double worst = 0;
};

RatioSummary Summarize(const std::vector<SweepPoint>& points, size_t which) {
  RatioSummary s;
  double sum = 0;
  for (const SweepPoint& p : points) {
    const auto optimal = Cost(p.rows[kOptimal]);
    if (!optimal) continue;
    const auto ratio = Divide(Cost(p.rows[which]), optimal);
    if (!ratio) {
      ++s.missed;
      continue;
    }
    ++s.both;
    sum += *ratio;
    s.worst = std::max(s.worst, *ratio);
  }
  if (s.both > 0) s.mean = sum / s.both;
  return s;
}

void WritePlot(const std::vector<SweepPoint>& points, const Graph& graph, double base_cost,
               int32_t rounds, const std::string& path) {
  const ByteUnit unit = ByteUnitFor(points.back().budget_bytes);
  std::string data = fmt::format(
      "# columns: budget_bytes budget_{} lower_bound optimal deterministic randomized "
      "deterministic_over_optimal randomized_over_optimal\n"
      "# costs as overheads (cost / no-remat cost); NaN: no schedule within the budget\n",
      unit.name);
  bool any_value = false;  // gnuplot cannot autoscale a plot without a single point
  for (const SweepPoint& p : points) {
    any_value = any_value || p.lower_bound.has_value() ||
                std::any_of(p.rows.begin(), p.rows.end(), [](const StrategyRow& r) { return r.fits(); });
    const auto optimal = Cost(p.rows[kOptimal]);
    const auto det = Cost(p.rows[kDeterministic]);
    const auto rnd = Cost(p.rows[kRandomized]);
    data += fmt::format("{} {:.10g} {} {} {} {} {} {}\n", p.budget_bytes,
                        static_cast<double>(p.budget_bytes) / unit.bytes,
                        NumberOrMissing(Scale(p.lower_bound, base_cost), "NaN"),
                        NumberOrMissing(Scale(optimal, base_cost), "NaN"),
                        NumberOrMissing(Scale(det, base_cost), "NaN"),
                        NumberOrMissing(Scale(rnd, base_cost), "NaN"),
                        NumberOrMissing(Divide(det, optimal), "NaN"),
                        NumberOrMissing(Divide(rnd, optimal), "NaN"));
  }
  const std::string name = graph.name().empty() ? "graph" : graph.name();
  const std::string commands = fmt::format(
      "set multiplot layout 2,1 title {}\n"
      "set grid\n"
      "set key inside top right opaque box\n"
      "set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05\n"
      "set ylabel 'overhead (cost / no-remat cost)'\n"
      "{}"
      "set format x ''\n"
      "plot datafile using 2:3 with lines {} title {}, \\\n"
      "     datafile using 2:4 with linespoints {} title 'optimal (MILP)', \\\n"
      "     datafile using 2:5 with linespoints {} title 'deterministic rounding', \\\n"
      "     datafile using 2:6 with linespoints {} title {}\n"
      "unset label 1\n"
      "set format x '%g'\n"
      "set xlabel 'activation budget ({})'\n"
      "set ylabel 'cost / optimal cost'\n"
      "plot 1 with lines lc rgb 'black' dt 2 notitle, \\\n"
      "     datafile using 2:7 with linespoints {} title 'deterministic rounding', \\\n"
      "     datafile using 2:8 with linespoints {} title {}\n"
      "unset multiplot\n",
      GnuplotQuote(name + ": LP rounding vs the optimum"),
      any_value ? ""
                : fmt::format("set xrange [{:.10g}:{:.10g}]\nset yrange [0:2]\nset label 1 "
                              "'nothing fits any of these budgets' at graph 0.5, 0.5 center\n",
                              static_cast<double>(points.front().budget_bytes) / unit.bytes - 1,
                              static_cast<double>(points.back().budget_bytes) / unit.bytes + 1),
      kBoundStyle, GnuplotQuote(BoundTitle(points)), StrategyStyle("optimal"),
      StrategyStyle("approx"), StrategyStyle("approx-randomized"),
      GnuplotQuote(fmt::format("randomized rounding (best of {})", rounds)), unit.name,
      StrategyStyle("approx"), StrategyStyle("approx-randomized"),
      GnuplotQuote(fmt::format("randomized rounding (best of {})", rounds)));
  RenderPlot({.image_path = path,
              .title = fmt::format("remat approx-report of {}", name),
              .width_px = 1000,
              .height_px = 760,
              .data = data,
              .commands = commands});
}

void PrintJson(const ApproxOptions& options, const Graph& graph,
               const StrategyResult& no_remat, const std::vector<SweepPoint>& points) {
  const double base_cost = no_remat.cost;
  const RatioSummary det = Summarize(points, kDeterministic);
  const RatioSummary rnd = Summarize(points, kRandomized);
  nlohmann::json rows = nlohmann::json::array();
  for (const SweepPoint& p : points) {
    const auto optimal = Cost(p.rows[kOptimal]);
    auto number = [](const std::optional<double>& v) {
      return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    };
    auto row = [&](size_t i) {
      return StrategyRowJson(p.rows[i], base_cost, p.lower_bound, options.solver.relative_gap);
    };
    rows.push_back(
        {{"budget_bytes", p.budget_bytes},
         {"lower_bound_cost", number(p.lower_bound)},
         {"lower_bound_status", p.lower_bound_status},
         {"optimal", row(kOptimal)},
         {"deterministic", row(kDeterministic)},
         {"randomized", row(kRandomized)},
         {"deterministic_over_optimal", number(Divide(Cost(p.rows[kDeterministic]), optimal))},
         {"randomized_over_optimal", number(Divide(Cost(p.rows[kRandomized]), optimal))},
         {"deterministic_over_lower_bound",
          number(Divide(Cost(p.rows[kDeterministic]), p.lower_bound))},
         {"randomized_over_lower_bound",
          number(Divide(Cost(p.rows[kRandomized]), p.lower_bound))}});
  }
  auto summary = [](const RatioSummary& s) {
    return nlohmann::json{{"budgets_both_fit", s.both},
                          {"budgets_missed", s.missed},
                          {"mean_ratio_to_optimal", s.both ? nlohmann::json(s.mean) : nlohmann::json(nullptr)},
                          {"worst_ratio_to_optimal", s.both ? nlohmann::json(s.worst) : nlohmann::json(nullptr)}};
  };
  const nlohmann::json doc = {{"schema", "remat.approx-report/2"},
                              {"graph", GraphSummaryJson(graph)},
                              {"no_remat_cost", base_cost},
                              {"no_remat_peak_bytes", no_remat.peak_bytes},
                              {"solver", SolverSettingsJson(options.solver)},
                              {"points", rows},
                              {"deterministic", summary(det)},
                              {"randomized", summary(rnd)}};
  fmt::print("{}\n", doc.dump(2));
}

void PrintTable(const ApproxOptions& options, const Graph& graph,
                const StrategyResult& no_remat, const std::vector<SweepPoint>& points) {
  const double base_cost = no_remat.cost;
  const RatioSummary det = Summarize(points, kDeterministic);
  const RatioSummary rnd = Summarize(points, kRandomized);
  fmt::print("graph: {} ({} nodes, {} edges, costs in {}); no-remat cost {:.6g}, peak {}\n",
             graph.name().empty() ? options.source.Describe() : graph.name(), graph.size(),
             graph.edges().size(), graph.cost_unit(), base_cost, FormatBytes(no_remat.peak_bytes));
  PrintWrapped(fmt::format("LP at (1 - {:g}) of each budget for the roundings; randomized: best "
                           "of {} draws, seed {}; time limit {:g} s per solver run",
                           options.solver.eps, options.solver.rounds, options.solver.seed,
                           options.solver.time_limit_s));
  fmt::print("\n");
  std::vector<std::vector<std::string>> table;
  for (const SweepPoint& p : points) {
    const StrategyRow& opt = p.rows[kOptimal];
    const auto optimal = Cost(opt);
    std::string opt_cell = CostCell(opt, base_cost);
    // Said only when proven (the status columns' rule): the cost meets the bound.
    const RowVerdict verdict = VerdictOf(opt, p.lower_bound, options.solver.relative_gap);
    if (opt.fits() && verdict != RowVerdict::kOptimal) {
      opt_cell += fmt::format(" ({})", RowVerdictText(verdict, options.solver.relative_gap));
    }
    table.push_back(
        {FormatBytes(p.budget_bytes),
         p.lower_bound ? fmt::format("{:.3f}x", *p.lower_bound / base_cost) : p.lower_bound_status,
         opt_cell, CostCell(p.rows[kDeterministic], base_cost),
         CostCell(p.rows[kRandomized], base_cost),
         Ratio(Divide(Cost(p.rows[kDeterministic]), optimal)),
         Ratio(Divide(Cost(p.rows[kRandomized]), optimal)),
         Ratio(Divide(optimal, p.lower_bound))});
  }
  fmt::print("{}", FormatTable({"budget", "LP bound", "optimal", "deterministic", "randomized",
                                "det/opt", "rand/opt", "opt/LP"},
                               table));
  auto line = [](const char* what, const RatioSummary& s) {
    if (s.both == 0) {
      return fmt::format("{}: no schedule at any of the {} budget(s) where the optimum has one",
                         what, s.missed);
    }
    return fmt::format("{}: mean {:.3f}x, worst {:.3f}x the optimum over {} budget(s); no "
                       "schedule at {} budget(s) where the optimum has one",
                       what, s.mean, s.worst, s.both, s.missed);
  };
  fmt::print("\n{}{}", WrapText(line("deterministic rounding", det), kTextWidth, "", "  "),
             WrapText(line("randomized rounding", rnd), kTextWidth, "", "  "));
}

void RunApproxReport(const ApproxOptions& options, int& exit_code) {
  CheckPlotPath("--plot", options.plot_path, options.source.Files());
  if (!options.plot_path.empty()) {
    FindGnuplot();
  }
  const TimeLeft command(0);  // from the start: loading the model is part of the limit
  const LoadedGraph loaded = LoadGraphSource(options.source);
  const Graph& graph = loaded.graph;
  const StrategyResult no_remat = CheckpointAll(graph, std::numeric_limits<int64_t>::max());
  const std::vector<int64_t> budgets = ResolveBudgetGrid(options.range, graph, no_remat.peak_bytes);
  const size_t runs = SweepWorkItems(budgets.size(), kStrategies.size(), true);
  // --time-limit for each strategy run and bound (docs/cli.md).
  const DeadlineScope deadline(
      CommandSecondsLeft(command, options.solver.time_limit_s * static_cast<double>(runs)),
      /*stoppable=*/false);
  ProgressLine progress("approx-report", runs, ProgressWanted(options.quiet));
  const std::vector<SweepPoint> points =
      RunBudgetSweep(graph, budgets, kStrategies, options.solver, true, progress.Hooks());
  if (options.json) {
    PrintJson(options, graph, no_remat, points);
  } else {
    PrintTable(options, graph, no_remat, points);
  }
  if (!options.plot_path.empty()) {
    WritePlot(points, graph, no_remat.cost, options.solver.rounds, options.plot_path);
    if (!options.json) {
      const PlotFiles files = PlotFilesFor(options.plot_path);
      fmt::print("\nplot written to {} (data {}, script {})\n", files.image, files.data, files.script);
    }
  }
  const bool any = std::any_of(points.begin(), points.end(), [](const SweepPoint& p) {
    return std::any_of(p.rows.begin(), p.rows.end(), [](const StrategyRow& r) { return r.fits(); });
  });
  exit_code = any ? kExitOk : kExitNoFeasibleSchedule;
}

}  // namespace

void AddApproxReportCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ApproxOptions>();
  CLI::App* command = app.add_subcommand(
      "approx-report", "LP rounding against the optimum over a budget range (paper figure 7)");
  AddGraphSourceOptions(*command, options->source);
  AddBudgetRangeOptions(*command, options->range);
  AddSolverSettingOptions(*command, options->solver);
  command->add_flag("--json", options->json, "machine-readable output (remat.approx-report/1)");
  command->add_option("--plot", options->plot_path,
                      "draw costs and ratios vs budget to FILE.svg or FILE.png (with FILE.dat, "
                      "FILE.gp)");
  command->add_flag("--quiet", options->quiet, "no progress line on stderr");
  command->callback([options, &exit_code] { RunApproxReport(*options, exit_code); });
}

}  // namespace remat
