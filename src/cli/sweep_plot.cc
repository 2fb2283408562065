// Overhead against budget for `remat sweep`.
#include "cli/sweep_plot.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "cli/overhead_axis.h"
#include "cli/planning_options.h"
#include "cli/plot_styles.h"

namespace remat {
namespace {

// Each bound source with the number of budgets where it gave the best bound.
std::vector<std::pair<std::string, int>> BoundSources(const std::vector<SweepPoint>& points) {
  std::vector<std::pair<std::string, int>> sources;  // in order of first appearance
  for (const SweepPoint& point : points) {
    if (!point.lower_bound || point.lower_bound_source.empty()) continue;
    auto it = std::find_if(sources.begin(), sources.end(),
                           [&](const auto& s) { return s.first == point.lower_bound_source; });
    if (it == sources.end()) {
      sources.emplace_back(point.lower_bound_source, 1);
    } else {
      ++it->second;
    }
  }
  return sources;
}

std::optional<double> Overhead(const StrategyRow& row, double base_cost) {
  if (!row.fits()) return std::nullopt;
  return row.result->cost / base_cost;
}

std::vector<OverheadColumn> Columns(const std::vector<SweepPoint>& points, double base_cost) {
  std::vector<OverheadColumn> columns;
  for (const SweepPoint& point : points) {
    OverheadColumn column;
    if (point.lower_bound) column.bound = *point.lower_bound / base_cost;
    for (const StrategyRow& row : point.rows) column.strategies.push_back(Overhead(row, base_cost));
    columns.push_back(std::move(column));
  }
  return columns;
}

// One row per budget: the budget, the bound's overhead, each strategy's overhead where it
// fits (NaN elsewhere, which gnuplot leaves out of the line).
std::string DataText(const std::vector<std::string>& strategies,
                     const std::vector<SweepPoint>& points, const std::vector<OverheadColumn>& columns,
                     const ByteUnit& unit) {
  std::string data = "# columns: budget_bytes budget_" + unit.name + " lower_bound";
  for (const std::string& name : strategies) data += " " + name;
  data += "\n# values are overheads (cost / no-remat cost); NaN: no schedule within the budget\n";
  data += "# lower_bound: the best valid bound, from";
  const auto sources = BoundSources(points);
  for (size_t i = 0; i < sources.size(); ++i) {
    data += fmt::format("{} {} at {} budget{}", i == 0 ? "" : ",", sources[i].first,
                        sources[i].second, sources[i].second == 1 ? "" : "s");
  }
  data += sources.empty() ? " nowhere (not computed)\n" : "\n";
  for (size_t p = 0; p < points.size(); ++p) {
    data += fmt::format("{} {:.10g} {}", points[p].budget_bytes,
                        static_cast<double>(points[p].budget_bytes) / unit.bytes,
                        NumberOrMissing(columns[p].bound, "NaN"));
    for (const auto& value : columns[p].strategies) data += " " + NumberOrMissing(value, "NaN");
    data += "\n";
  }
  return data;
}

// "griewank-logn 1.47x", or "chen-sqrtn-ap 1.31x-1.33x" when its clipped values differ.
std::string ClippedLabel(const std::string& name, const std::vector<ClippedValue>& above,
                         size_t strategy) {
  double least = 0;
  double most = 0;
  bool first = true;
  for (const ClippedValue& value : above) {
    if (value.strategy != strategy) continue;
    least = first ? value.overhead : std::min(least, value.overhead);
    most = first ? value.overhead : std::max(most, value.overhead);
    first = false;
  }
  const std::string range = fmt::format("{:.2f}x", least);
  return fmt::format("{} {}", name,
                     range == fmt::format("{:.2f}x", most) ? range
                                                           : fmt::format("{}-{:.2f}x", range, most));
}

// The y range of a clipped axis and an arrow at the top edge per clipped value, in the
// strategy's colour; each clipped strategy is labelled once, at its first arrow, and labels
// at one budget are stacked below each other.
std::string ClippedAxisCommands(const OverheadAxis& axis, const std::vector<std::string>& strategies,
                                const std::vector<SweepPoint>& points, const ByteUnit& unit) {
  std::string commands = fmt::format("set yrange [{:.10g}:{:.10g}]\n",
                                     axis.low - 0.04 * (axis.high - axis.low), axis.high);
  const double first = static_cast<double>(points.front().budget_bytes);
  const double last = static_cast<double>(points.back().budget_bytes);
  std::vector<int> stacked(points.size(), 0);
  std::vector<bool> labelled(strategies.size(), false);
  int labels = 0;
  for (size_t k = 0; k < axis.above.size(); ++k) {
    const ClippedValue& value = axis.above[k];
    const std::string& name = strategies[value.strategy];
    const std::string colour = StrategyLook(name).colour;
    const double bytes = static_cast<double>(points[value.budget].budget_bytes);
    const double x = bytes / unit.bytes;
    commands += fmt::format(
        "set arrow {} from first {:.10g}, graph 0.93 to first {:.10g}, graph 1 head filled "
        "size screen 0.01,25 lw 1.5 lc rgb '{}' front\n",
        k + 1, x, x, colour);
    if (labelled[value.strategy]) continue;
    labelled[value.strategy] = true;
    // Labels in the left half run rightwards from the arrow, the others leftwards.
    const bool left_half = last <= first || bytes - first <= (last - first) / 2;
    commands += fmt::format("set label {} {} at first {:.10g}, graph 0.955 {} offset {}, {} tc "
                            "rgb '{}' front\n",
                            ++labels, GnuplotQuote(ClippedLabel(name, axis.above, value.strategy)),
                            x, left_half ? "left" : "right", left_half ? "0.8" : "-0.8",
                            -stacked[value.budget]++, colour);
  }
  return commands;
}

}  // namespace

std::string BoundTitle(const std::vector<SweepPoint>& points) {
  std::string names;
  for (const auto& [source, count] : BoundSources(points)) {
    names += (names.empty() ? "" : ", ") + source;
  }
  return names.empty() ? "lower bound" : "lower bound (" + names + ")";
}

PlotSpec SweepPlot(const SweepPlotInput& input, const std::vector<std::string>& strategies,
                   const std::vector<SweepPoint>& points) {
  const ByteUnit unit = ByteUnitFor(points.back().budget_bytes);
  const std::vector<OverheadColumn> columns = Columns(points, input.no_remat_cost);
  const std::string bound_title = BoundTitle(points);
  const bool any_bound = std::any_of(columns.begin(), columns.end(),
                                     [](const OverheadColumn& c) { return c.bound.has_value(); });
  bool any_value = any_bound;  // gnuplot cannot autoscale a plot without a single point
  for (const OverheadColumn& column : columns) {
    for (const auto& value : column.strategies) any_value = any_value || value.has_value();
  }
  std::string commands = fmt::format(
      "set title {}\n"
      "set xlabel 'activation budget ({})'\n"
      "set ylabel 'overhead (cost / no-remat cost)'\n"
      "set key outside right top\n"
      "set grid\n"
      "set offsets graph 0.02, graph 0.02, graph 0.05, graph 0.05\n",
      GnuplotQuote(fmt::format("{}: compute overhead vs memory budget",
                               input.graph_name.empty() ? "graph" : input.graph_name)),
      unit.name);
  if (!any_value) {
    const double low = static_cast<double>(points.front().budget_bytes) / unit.bytes;
    const double high = static_cast<double>(points.back().budget_bytes) / unit.bytes;
    commands += fmt::format(
        "set xrange [{:.10g}:{:.10g}]\nset yrange [0:2]\n"
        "set label 1 'no strategy fits any of these budgets' at graph 0.5, 0.5 center\n",
        low - (high > low ? 0 : 1), high + (high > low ? 0 : 1));
  }
  std::vector<std::string> series;
  if (any_bound) {
    series.push_back(fmt::format("datafile using 2:3 with lines {} title {}", kBoundStyle,
                                 GnuplotQuote(bound_title)));
  }
  for (size_t s = 0; s < strategies.size(); ++s) {
    series.push_back(fmt::format("datafile using 2:{} with linespoints {} title {}", s + 4,
                                 StrategyStyle(strategies[s]), GnuplotQuote(strategies[s])));
  }
  if (const auto axis = ClipOverheadAxis(columns)) {
    commands += ClippedAxisCommands(*axis, strategies, points, unit);
    series.push_back("keyentry with vectors head filled lw 1.5 lc rgb 'black' "
                     "title 'above the axis (value at the arrow)'");
  }
  commands += "plot " + series.front();
  for (size_t s = 1; s < series.size(); ++s) commands += ", \\\n     " + series[s];
  commands += "\n";
  return {.image_path = input.image_path,
          .title = fmt::format("remat sweep of {}", input.graph_name),
          .width_px = 1100,  // the key of a dozen strategies takes a third
          .height_px = 600,
          .data = DataText(strategies, points, columns, unit),
          .commands = commands};
}

}  // namespace remat
