// Every strategy is drawn in its own colour with its own marker, whatever else is plotted.
#include "cli/plot_styles.h"

#include <gtest/gtest.h>

#include <set>

#include "planning/strategy_runner.h"

namespace remat {
namespace {

TEST(PlotStylesTest, EveryStrategyOfTheRegistryHasItsOwnColourAndMarker) {
  const std::vector<std::string> names = StrategyNames();
  ASSERT_EQ(names.size(), 17u);
  const SeriesLook unknown = StrategyLook("no-such-strategy");
  std::set<std::string> colours;
  std::set<int> markers;
  for (const std::string& name : names) {
    const SeriesLook look = StrategyLook(name);
    EXPECT_NE(look.colour, unknown.colour) << name << " has no look of its own";
    EXPECT_TRUE(colours.insert(look.colour).second) << name << " shares colour " << look.colour;
    EXPECT_TRUE(markers.insert(look.point_type).second) << name << " shares marker "
                                                        << look.point_type;
  }
  // The unknown look is not one of theirs either.
  EXPECT_EQ(colours.count(unknown.colour), 0u);
  EXPECT_EQ(markers.count(unknown.point_type), 0u);
}

TEST(PlotStylesTest, StyleWordsCarryTheLook) {
  // optimal, 12th in the registry, used to be drawn as the 2nd (chen-sqrtn-ap): index % 10.
  EXPECT_EQ(StrategyStyle("optimal"), "lw 2.5 lc rgb '#000000' pt 7 ps 1.1");
  EXPECT_EQ(StrategyStyle("chen-sqrtn-ap"), "lw 1.5 lc rgb '#56B4E9' pt 4 ps 0.9");
}

}  // namespace
}  // namespace remat
