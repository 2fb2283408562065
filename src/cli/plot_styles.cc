// Colours and markers of the strategies in plots.
#include "cli/plot_styles.h"

#include <array>

#include <fmt/format.h>

namespace remat {
namespace {

struct NamedLook {
  const char* name;
  SeriesLook look;
};

// Colour-blind-safe colours (Okabe-Ito, Tol and Tableau). A method's two variants share a
// hue family, open markers for the first and filled for the second; optimal is the thick
// black line with filled circles, checkpoint-all the grey reference.
// The first-blocks and selective-fit variants have markers past 15, which some terminals draw as 1 and 2 again:
// their colours tell them apart.
const std::array<NamedLook, 17> kLooks = {{
    {"checkpoint-all", {"#7F7F7F", 6}},
    {"chen-sqrtn-ap", {"#56B4E9", 4}},
    {"chen-sqrtn-linear", {"#0072B2", 5}},
    {"chen-greedy-ap", {"#E69F00", 8}},
    {"chen-greedy-linear", {"#D55E00", 9}},
    {"griewank-logn", {"#CC79A7", 10}},
    {"griewank", {"#882255", 11}},
    {"checkpoint-blocks", {"#44AA99", 1}},
    {"selective", {"#117733", 15}},
    {"checkpoint-first-blocks", {"#88CCEE", 16}},
    {"selective-first-blocks", {"#999933", 17}},
    {"selective-fit", {"#DDCC77", 18}},
    {"evict", {"#8C564B", 2}},
    {"local-search", {"#BCBD22", 3}},
    {"approx", {"#009E73", 12}},
    {"approx-randomized", {"#332288", 13}},
    {"optimal", {"#000000", 7, 2.5}},
}};

}  // namespace

SeriesLook StrategyLook(const std::string& name) {
  for (const NamedLook& entry : kLooks) {
    if (name == entry.name) return entry.look;
  }
  return {"#444444", 14};
}

std::string StrategyStyle(const std::string& name) {
  const SeriesLook look = StrategyLook(name);
  return fmt::format("lw {:g} lc rgb '{}' pt {} ps {:g}", look.line_width, look.colour,
                     look.point_type, look.line_width > 2 ? 1.1 : 0.9);
}

}  // namespace remat
