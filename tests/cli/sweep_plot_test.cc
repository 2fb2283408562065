// The sweep plot's script and data: the bound named by its source, strategies drawn by name,
// and an axis that clips far-off values and marks them.
#include "cli/sweep_plot.h"

#include <gtest/gtest.h>

#include "cli/plot_styles.h"

namespace remat {
namespace {

const std::vector<std::string> kNames = {"checkpoint-all", "chen-sqrtn-linear", "optimal"};

// A budget with a bound from `source` and one row per name of kNames; costs are in units of
// a no-remat cost of 100, nullopt where the strategy has no schedule that fits.
SweepPoint Point(int64_t budget_bytes, std::optional<double> bound, const std::string& source,
                 const std::vector<std::optional<double>>& costs) {
  SweepPoint point{.budget_bytes = budget_bytes, .lower_bound = bound};
  if (bound) point.lower_bound_source = source;
  for (size_t s = 0; s < costs.size(); ++s) {
    StrategyRow row{.strategy = kNames[s]};
    if (costs[s]) row.result = StrategyResult{.status = FitStatus::kFits, .cost = *costs[s]};
    point.rows.push_back(row);
  }
  return point;
}

TEST(SweepPlotTest, TheBoundIsNamedByItsSource) {
  EXPECT_EQ(BoundTitle({Point(10, 120, "LP relaxation", {}), Point(20, 100, "LP relaxation", {})}),
            "lower bound (LP relaxation)");
  EXPECT_EQ(BoundTitle({Point(10, 120, "absence-gap", {}), Point(20, 110, "LP relaxation", {}),
                        Point(30, 100, "LP relaxation", {})}),
            "lower bound (absence-gap, LP relaxation)");
  EXPECT_EQ(BoundTitle({Point(10, std::nullopt, "", {})}), "lower bound");
}

// Overheads 1.20/1.47/1.15 at 10 B, 1.10/1.12/1.10 at 20 B and 1.0 at 30 B: as in
// OverheadAxisTest.AnOutlierAboveTheRestIsClipped, the axis ends at 1.23 and
// chen-sqrtn-linear's 1.47 at 10 B is drawn as an arrow.
std::vector<SweepPoint> PointsWithAnOutlier() {
  return {Point(10, 110, "LP relaxation", {120, 147, 115}),
          Point(20, 105, "LP relaxation", {110, 112, 110}),
          Point(30, 100, "LP relaxation", {100, 100, 100})};
}

TEST(SweepPlotTest, AnOutlierIsAnArrowAboveAnAxisScaledToTheBand) {
  const PlotSpec spec = SweepPlot({.image_path = "s.svg", .graph_name = "g", .no_remat_cost = 100},
                                  kNames, PointsWithAnOutlier());
  const std::string& c = spec.commands;
  // low 1.0 less 4% of the 0.23 range, high 1.23.
  EXPECT_NE(c.find("set yrange [0.9908:1.23]\n"), std::string::npos) << c;
  EXPECT_NE(c.find("set arrow 1 from first 10, graph 0.93 to first 10, graph 1 head"),
            std::string::npos) << c;
  EXPECT_NE(c.find("set label 1 'chen-sqrtn-linear 1.47x' at first 10, graph 0.955 left"),
            std::string::npos) << c;
  EXPECT_EQ(c.find("set arrow 2"), std::string::npos) << c;
  EXPECT_NE(c.find("title 'above the axis (value at the arrow)'"), std::string::npos) << c;
  EXPECT_NE(c.find("using 2:3 with lines lw 2 dt 2 lc rgb 'black' title 'lower bound (LP "
                   "relaxation)'"),
            std::string::npos) << c;
  // Each strategy in its own look, whatever its position in the list.
  EXPECT_NE(c.find("using 2:6 with linespoints " + StrategyStyle("optimal") + " title 'optimal'"),
            std::string::npos) << c;
  // The data keep the true value.
  EXPECT_NE(spec.data.find("\n10 10 1.1 1.2 1.47 1.15\n"), std::string::npos) << spec.data;
  EXPECT_NE(spec.data.find("# lower_bound: the best valid bound, from LP relaxation at 3 "
                           "budgets\n"),
            std::string::npos)
      << spec.data;
}

TEST(SweepPlotTest, WithoutAnOutlierGnuplotScalesTheAxis) {
  std::vector<SweepPoint> points = PointsWithAnOutlier();
  points[0].rows[1].result->cost = 125;  // 1.25x: only 0.05 above 1.20
  const PlotSpec spec = SweepPlot({.image_path = "s.svg", .graph_name = "g", .no_remat_cost = 100},
                                  kNames, points);
  EXPECT_EQ(spec.commands.find("set yrange"), std::string::npos) << spec.commands;
  EXPECT_EQ(spec.commands.find("set arrow"), std::string::npos) << spec.commands;
}

TEST(SweepPlotTest, AStrategyClippedAtSeveralBudgetsIsLabelledOnce) {
  std::vector<SweepPoint> points = PointsWithAnOutlier();
  points[1].rows[1].result->cost = 145;  // 1.45x at 20 B: clipped too (1.45 - 1.20 > 0.1)
  const PlotSpec spec = SweepPlot({.image_path = "s.svg", .graph_name = "g", .no_remat_cost = 100},
                                  kNames, points);
  const std::string& c = spec.commands;
  EXPECT_NE(c.find("set arrow 2 from first 20, graph 0.93"), std::string::npos) << c;
  EXPECT_NE(c.find("set label 1 'chen-sqrtn-linear 1.45x-1.47x' at first 10"),
            std::string::npos) << c;
  EXPECT_EQ(c.find("set label 2"), std::string::npos) << c;
}

TEST(SweepPlotTest, NoBoundNoBoundLine) {
  const PlotSpec spec = SweepPlot({.image_path = "s.svg", .graph_name = "g", .no_remat_cost = 100},
                                  kNames, {Point(10, std::nullopt, "", {100, 100, 100})});
  EXPECT_EQ(spec.commands.find("lower bound"), std::string::npos) << spec.commands;
  EXPECT_NE(spec.commands.find("plot datafile using 2:4 "), std::string::npos) << spec.commands;
}

}  // namespace
}  // namespace remat
