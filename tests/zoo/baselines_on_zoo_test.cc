// Every zoo graph is a valid training graph and every baseline strategy schedules it at the
// no-rematerialization peak.
#include <gtest/gtest.h>

#include <limits>

#include "core/schedule.h"
#include "core/simulator.h"
#include "strategies/checkpoint_all.h"
#include "strategies/registry.h"
#include "zoo/registry.h"

namespace remat {
namespace {

// The paper's sizes, except a small transformer (2 blocks, seq 64) to keep the suite fast.
Graph ZooGraph(const std::string& model) {
  if (model == "transformer") {
    return BuildModelTrainingGraph(
        model,
        {.batch = 2, .seq_length = 64, .layers = 2, .hidden = 64, .heads = 4, .vocab = 1000});
  }
  return BuildModelTrainingGraph(model);
}

class BaselinesOnZooTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BaselinesOnZooTest, GraphValidatesAndEveryBaselineSchedulesIt) {
  const Graph graph = ZooGraph(GetParam());  // the Graph constructor validates
  ASSERT_TRUE(graph.has_training_structure());
  const StrategyResult all = CheckpointAll(graph, std::numeric_limits<int64_t>::max());
  // Without rematerialization every node runs once: the cost is the sum of all node costs.
  EXPECT_DOUBLE_EQ(all.cost, graph.total_cost());
  const int64_t budget_bytes = all.peak_bytes;
  for (const StrategySpec& spec : BaselineStrategies()) {
    SCOPED_TRACE(spec.name);
    if (!spec.applies(graph)) {  // module structure: only the transformer has blocks
      EXPECT_TRUE(spec.name == "checkpoint-blocks" || spec.name == "checkpoint-first-blocks" ||
                  spec.name == "selective-first-blocks")
          << spec.name;
      EXPECT_NE(GetParam(), "transformer");
      continue;
    }
    const StrategyResult result = spec.run(graph, budget_bytes);
    // Rematerializing never needs more than keeping everything: every baseline fits.
    EXPECT_EQ(result.status, FitStatus::kFits) << result.peak_bytes << " > " << budget_bytes;
    EXPECT_TRUE(CheckSchedule(graph, result.schedule).empty());
    const SimulationResult simulated = Simulate(graph, result.schedule);
    EXPECT_EQ(simulated.peak_bytes, result.peak_bytes);
    EXPECT_DOUBLE_EQ(simulated.cost, result.cost);
    // No schedule computes less than every node once.
    EXPECT_GE(result.cost, all.cost * (1 - 1e-12));
  }
}

INSTANTIATE_TEST_SUITE_P(AllModels, BaselinesOnZooTest,
                         ::testing::Values("vgg16", "vgg19", "resnet50", "mobilenet", "unet",
                                           "fcn8", "segnet", "transformer"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace remat
