// The maxbatch bar chart: a bar of 0 says why no batch fits.
#include "cli/maxbatch_plot.h"

#include <gtest/gtest.h>

namespace remat {
namespace {

StrategySearch NothingFits(const std::string& strategy, const std::string& reason) {
  return {.strategy = strategy, .max_batch = 0, .next = BatchProbe{.batch = 1, .reason = reason}};
}

TEST(MaxBatchPlotTest, AZeroBarGivesTheVerdictAtBatchOne) {
  EXPECT_EQ(ZeroBarReason(NothingFits("checkpoint-all", "the fixed memory 301.6 MB fills the device")),
            "batch 1: the fixed memory 301.6 MB fills the device");
  // Proofs after the first clause stay in the table.
  EXPECT_EQ(ZeroBarReason(NothingFits("optimal", "overhead 1.500x above the cap 1.333x; proven: "
                                                 "LP relaxation bound 1.400x")),
            "batch 1: overhead 1.500x above the cap 1.333x");
  EXPECT_EQ(ZeroBarReason({.strategy = "griewank", .stopped_at_total_limit = true}),
            "not tried: --total-time-limit spent");
}

TEST(MaxBatchPlotTest, EveryZeroBarIsLabelledWithItsReason) {
  MaxBatchReport report;
  report.results.push_back(NothingFits("checkpoint-all", "budget 1 MB is below the minimum peak 2 MB"));
  report.results.push_back({.strategy = "optimal", .max_batch = 5});
  const PlotSpec spec = MaxBatchPlot(report, "t", "m.svg");
  EXPECT_NE(spec.commands.find("set label 1 'batch 1: budget 1 MB is below the minimum peak 2 MB' "
                               "at first 0, first 0 rotate by 90 left"),
            std::string::npos)
      << spec.commands;
  EXPECT_EQ(spec.commands.find("set label 2 "), std::string::npos) << spec.commands;
  EXPECT_NE(spec.commands.find("set yrange [0:*]"), std::string::npos) << spec.commands;
}

TEST(MaxBatchPlotTest, AllZeroStillHasAnAxis) {
  MaxBatchReport report;
  report.results.push_back(NothingFits("checkpoint-all", "the fixed memory 1 GB fills the device"));
  const PlotSpec spec = MaxBatchPlot(report, "t", "m.svg");
  EXPECT_NE(spec.commands.find("set yrange [0:1]"), std::string::npos) << spec.commands;
}

}  // namespace
}  // namespace remat
