// How each strategy is drawn: one colour and one marker per strategy name, the same in every
// plot (sweep, approx-report), so a reader who learned them once can read the next plot.
#pragma once

#include <string>

namespace remat {

struct SeriesLook {
  std::string colour;     // "#RRGGBB"
  int point_type = 7;     // gnuplot's pt (pngcairo and svg share the numbering)
  double line_width = 1.5;
};

// The look of the strategy called `name`. Every name of StrategyNames() has its own colour
// and its own marker (tests/cli/plot_styles_test.cc); an unknown name gets a dark grey
// diamond.
SeriesLook StrategyLook(const std::string& name);

// gnuplot style words for a lines-and-points series: "lw 1.5 lc rgb '#0072B2' pt 5 ps 0.9".
std::string StrategyStyle(const std::string& name);

// The lower bound: a dashed black line without markers, unlike every strategy.
inline constexpr const char* kBoundStyle = "lw 2 dt 2 lc rgb 'black'";

}  // namespace remat
