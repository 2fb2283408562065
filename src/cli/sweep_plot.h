// The picture of `remat sweep`: overhead against budget, one line per strategy, the lower bound
// named by where it came from, and an axis that far-off values do not squash.
#pragma once

#include <string>
#include <vector>

#include "cli/gnuplot.h"
#include "planning/budget_sweep.h"

namespace remat {

// The legend entry of the bound line, naming its source: "lower bound (LP relaxation)", or
// "lower bound (absence-gap, LP relaxation)" when the best bound came from different places
// along the sweep (the data file counts the budgets of each); "lower bound" alone when no
// point has a source.
std::string BoundTitle(const std::vector<SweepPoint>& points);

struct SweepPlotInput {
  std::string image_path;  // .svg or .png
  std::string graph_name;
  double no_remat_cost = 1;
};

// The data and gnuplot commands of the sweep plot; `points` hold one row per name of
// `strategies`, in that order. The y axis follows ClipOverheadAxis (cli/overhead_axis.h):
// values above it are drawn as arrows at the top edge, each clipped strategy labelled once
// with its name and overheads.
PlotSpec SweepPlot(const SweepPlotInput& input, const std::vector<std::string>& strategies,
                   const std::vector<SweepPoint>& points);

}  // namespace remat
