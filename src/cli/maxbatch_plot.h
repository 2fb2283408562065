// The picture of `remat maxbatch`: one bar per strategy with its largest batch, a dashed outline
// up to an uncertified batch, and for a bar of 0 the reason no batch fits.
#pragma once

#include <string>

#include "cli/gnuplot.h"
#include "planning/max_batch.h"

namespace remat {

// Why `search` found no batch, for the label of its empty bar: the verdict at batch 1
// ("batch 1: the fixed memory 301.6 MB fills the device"), or why batch 1 was not tried.
std::string ZeroBarReason(const StrategySearch& search);

// The data and gnuplot commands of the bar chart; `title` heads the plot.
PlotSpec MaxBatchPlot(const MaxBatchReport& report, const std::string& title,
                      const std::string& image_path);

}  // namespace remat
