// remat plot schedule: a schedule file drawn as the paper draws schedules (the R and S
// matrices, stage against node) above its memory-over-time curve, re-simulated here.
#include "cli/plot_command.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "cli/gnuplot.h"
#include "cli/output_paths.h"
#include "core/sizes.h"
#include "planning/budget.h"
#include "planning/plan_report.h"
#include "solvers/solver_types.h"
#include "core/plan.h"
#include "core/quoted.h"
#include "core/schedule_json.h"
#include "core/simulator.h"
#include "strategies/checkpoint_all.h"

namespace remat {
namespace {

struct PlotScheduleOptions {
  std::string schedule_path;
  std::string output_path;
  std::string budget_text;  // overrides the budget stored in the file
};

// Data blocks, separated by two blank lines for gnuplot's `index`:
//   0: R cells "stage node kind" (kind 1: first computation, 2: recomputation)
//   1: S cells "stage node"
//   2: memory  "operation stage live_bytes live_<unit>"
struct ScheduleData {
  std::string text;
  int64_t computed = 0;
  int64_t recomputed = 0;
  int64_t held = 0;
  int64_t operations = 0;
};

ScheduleData BuildData(const Schedule& schedule, const Plan& plan,
                       const SimulationResult& sim, const ByteUnit& unit) {
  ScheduleData d;
  d.text = "# block 0, R: stage node kind (1 computed for the first time, 2 recomputed)\n";
  const std::vector<std::vector<int32_t>> computed = schedule.R.Rows();
  for (int32_t t = 0; t < schedule.stages(); ++t) {
    for (int32_t i : computed[t]) {
      // Frontier-advancing: stage t computes node t for the first time (docs/design.md §3).
      const bool first = i == t;
      d.text += fmt::format("{} {} {}\n", t, i, first ? 1 : 2);
      ++(first ? d.computed : d.recomputed);
    }
  }
  d.text += "\n\n# block 1, S: stage node (held from the previous stage)\n";
  const std::vector<std::vector<int32_t>> held = schedule.S.Rows();
  for (int32_t t = 0; t < schedule.stages(); ++t) {
    for (int32_t i : held[t]) {
      d.text += fmt::format("{} {}\n", t, i);
      ++d.held;
    }
  }
  d.text += fmt::format("\n\n# block 2, memory: operation stage live_bytes live_{} (after the "
                        "operation)\n",
                        unit.name);
  for (size_t k = 0; k < plan.size(); ++k) {
    const int64_t live = sim.live_bytes_after_op[k];
    d.text += fmt::format("{} {} {} {:.10g}\n", k, plan[k].stage, live,
                          static_cast<double>(live) / unit.bytes);
  }
  d.operations = static_cast<int64_t>(plan.size());
  return d;
}

std::string MatrixPanel(const std::string& title, int32_t n, double x, double y, double w,
                        double h) {
  return fmt::format(
      "set origin {}, {}\nset size {}, {}\n"
      "set title {}\n"
      "set xrange [-0.5:{}]\nset yrange [{}:-0.5]\n"
      "set xlabel 'node'\nset ylabel 'stage'\n"
      // Frontier-advancing leaves the upper right triangle empty: room for the key.
      "set key inside top right vertical opaque box\n"
      "unset grid\n",
      x, y, w, h, GnuplotQuote(title), n - 0.5, n - 0.5);
}

// "optimal (recorded: optimal, gap 0.0%; not verified)": what the file says of its proof and
// its gap to the recorded bound, labelled as the file's word (remat plot does not solve again).
std::string StrategyLabel(const ScheduleDocument& doc, const SimulationResult& sim) {
  std::string strategy = doc.info.strategy.empty() ? "schedule" : Printable(doc.info.strategy);
  std::vector<std::string> recorded;
  if (!doc.info.solver_status.empty()) recorded.push_back(doc.info.solver_status);
  if (doc.info.lower_bound_cost && sim.cost > 0) {
    recorded.push_back(
        fmt::format("gap {:.1f}%", 100.0 * RelativeGap(sim.cost, *doc.info.lower_bound_cost)));
  }
  if (recorded.empty()) return strategy;
  return fmt::format("{} (recorded: {}; not verified)", strategy, fmt::join(recorded, ", "));
}

// The gnuplot script: the R and S panels above the memory over the plan's operations.
std::string ScheduleCommands(const std::string& name, const std::string& strategy, int32_t n,
                             const SimulationResult& sim, const ScheduleData& data,
                             const ByteUnit& unit, std::optional<int64_t> budget) {
  std::string commands = fmt::format("set multiplot title {}\n",
                                     GnuplotQuote(fmt::format("{}: {}, cost {:.6g}, peak {}",
                                                              name, strategy, sim.cost,
                                                              FormatBytes(sim.peak_bytes))));
  // Cells are boxes of one node by one stage; a cell plot with no rows is left empty.
  const std::string cell = "using 2:1:(0.5):(0.5) with boxxyerror fs solid 1.0 noborder";
  commands += MatrixPanel("R: computed in stage", n, 0.0, 0.40, 0.5, 0.56);
  commands += fmt::format(
      "plot datafile index 0 using 2:($3 == 1 ? $1 : NaN):(0.5):(0.5) with boxxyerror fs solid "
      "1.0 noborder lc rgb '#0072B2' title 'computed ({})', \\\n"
      "     datafile index 0 using 2:($3 == 2 ? $1 : NaN):(0.5):(0.5) with boxxyerror fs solid "
      "1.0 noborder lc rgb '#D55E00' title 'recomputed ({})'\n",
      data.computed, data.recomputed);
  commands += MatrixPanel("S: held into stage", n, 0.5, 0.40, 0.5, 0.56);
  if (data.held > 0) {
    commands += fmt::format("plot datafile index 1 {} lc rgb '#009E73' title 'held ({})'\n", cell,
                            data.held);
  } else {
    commands += "set label 1 'nothing held' at graph 0.5, 0.5 center\n"
                "plot 0 with lines lc rgb 'white' notitle\nunset label 1\n";
  }
  commands += fmt::format(
      "set origin 0, 0\nset size 1, 0.40\n"
      "set title 'memory over the operations of the plan'\n"
      "set xrange [0:{}]\nset yrange [0:{:.10g}]\n"
      "set xlabel 'operation (allocate, compute, free)'\n"
      "set ylabel 'live bytes ({})'\n"
      "set key inside top right vertical\nset grid\n",
      std::max<int64_t>(1, data.operations - 1),
      // Room above the higher of the peak and the budget line for the key.
      1.25 * static_cast<double>(std::max<int64_t>(1, std::max(sim.peak_bytes, budget.value_or(0)))) /
          unit.bytes,
      unit.name);
  std::string memory_plot = fmt::format(
      "plot datafile index 2 using 1:4 with steps lw 1.5 lc rgb '#0072B2' title 'live memory "
      "(peak {})'",
      FormatBytes(sim.peak_bytes));
  if (budget) {
    memory_plot += fmt::format(", \\\n     {:.10g} with lines dt 2 lw 2 lc rgb '#D55E00' title "
                               "'budget {}'",
                               static_cast<double>(*budget) / unit.bytes, FormatBytes(*budget));
  }
  commands += memory_plot + "\nunset multiplot\n";

  return commands;
}

void PrintSummary(const PlotScheduleOptions& options, const ScheduleDocument& doc,
                  const std::string& name, const std::string& strategy,
                  const SimulationResult& sim, const ScheduleData& data,
                  std::optional<int64_t> budget) {
  const int32_t n = doc.graph.size();
  fmt::print("schedule: {} ({}, {} nodes, strategy {})\n", options.schedule_path, name, n, strategy);
  fmt::print("re-simulated: cost {:.6g}, peak {} ({} B); {} operations; R: {} computed, {} "
             "recomputed; S: {} held\n",
             sim.cost, FormatBytes(sim.peak_bytes), sim.peak_bytes, data.operations, data.computed,
             data.recomputed, data.held);
  if (doc.info.cost != sim.cost || doc.info.peak_bytes != sim.peak_bytes) {
    fmt::print(stderr,
               "remat: warning: {} records cost {:.6g} and peak {} B, the simulator gives {:.6g} "
               "and {} B; the plot shows the simulator's\n",
               options.schedule_path, doc.info.cost, doc.info.peak_bytes, sim.cost, sim.peak_bytes);
  }
  if (budget) {
    fmt::print("budget: {} ({} B){}\n", FormatBytes(*budget), *budget,
               sim.peak_bytes > *budget ? ": the schedule is OVER it" : "");
  } else {
    fmt::print("budget: none recorded (give --budget to draw one)\n");
  }
  const PlotFiles files = PlotFilesFor(options.output_path);
  fmt::print("plot written to {} (data {}, script {})\n", files.image, files.data, files.script);
}

void RunPlotSchedule(const PlotScheduleOptions& options, int& exit_code) {
  CheckPlotPath("-o", options.output_path, {options.schedule_path});
  FindGnuplot();
  const ScheduleDocument doc = LoadScheduleFile(options.schedule_path);
  const Graph& graph = doc.graph;
  const Plan plan = BuildPlan(graph, doc.schedule);
  const SimulationResult sim = Simulate(graph, plan);
  std::optional<int64_t> budget = doc.info.budget_bytes;
  if (!options.budget_text.empty()) {
    budget = ParseBytes(options.budget_text, "--budget", NoRemat(graph).peak_bytes);
  }
  const ByteUnit unit = ByteUnitFor(std::max(sim.peak_bytes, budget.value_or(0)));
  const ScheduleData data = BuildData(doc.schedule, plan, sim, unit);
  const std::string name = graph.name().empty() ? options.schedule_path : graph.name();
  const std::string strategy = StrategyLabel(doc, sim);
  RenderPlot({.image_path = options.output_path,
              .title = fmt::format("remat plot schedule {}", options.schedule_path),
              .width_px = 1100,
              .height_px = 1000,
              .data = data.text,
              .commands = ScheduleCommands(name, strategy, graph.size(), sim, data, unit, budget)});
  PrintSummary(options, doc, name, strategy, sim, data, budget);
  exit_code = kExitOk;
}

}  // namespace

void AddPlotCommand(CLI::App& app, int& exit_code) {
  CLI::App* plot = app.add_subcommand("plot", "draw pictures of remat's results (gnuplot)");
  plot->require_subcommand(1);
  auto options = std::make_shared<PlotScheduleOptions>();
  CLI::App* schedule = plot->add_subcommand(
      "schedule", "the R and S matrices of a schedule file and its memory over time");
  schedule->add_option("FILE", options->schedule_path, "schedule JSON (remat solve -o)")
      ->required();
  schedule->add_option("-o,--output", options->output_path, "OUT.svg or OUT.png (with OUT.dat, OUT.gp)")
      ->check(kOutputPath)
      ->required();
  schedule->add_option("--budget", options->budget_text,
                       "budget line (default: the one in the file); bytes, units or a percentage "
                       "of the no-remat peak");
  schedule->callback([options, &exit_code] { RunPlotSchedule(*options, exit_code); });
}

}  // namespace remat
