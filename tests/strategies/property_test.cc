// Property tests over 200 seeded random training graphs (forward DAGs of 1 to 40 layers).
#include <gtest/gtest.h>

#include <map>

#include "core/plan.h"
#include "core/simulator.h"
#include "strategies/checkpoint_all.h"
#include "strategies/registry.h"
#include "testing/random_graphs.h"

namespace remat {
namespace {

// Replays the operation list on its own: every read finds a live value, no value is
// allocated twice or freed while dead, and returns the largest live total at an allocation.
int64_t RecountPeak(const Graph& g, const Plan& plan) {
  std::map<int32_t, bool> live;
  int64_t bytes = 0;
  int64_t peak = 0;
  for (size_t k = 0; k < plan.size(); ++k) {
    const Op& op = plan[k];
    SCOPED_TRACE(::testing::Message() << "op " << k << " node " << op.node);
    if (op.kind == OpKind::kAllocate) {
      EXPECT_FALSE(live[op.node]);
      live[op.node] = true;
      bytes += g.node(op.node).bytes;
      peak = std::max(peak, bytes);
    } else if (op.kind == OpKind::kFree) {
      EXPECT_TRUE(live[op.node]);
      live[op.node] = false;
      bytes -= g.node(op.node).bytes;
    } else {
      EXPECT_TRUE(live[op.node]);
      for (int32_t u : g.preds(op.node)) EXPECT_TRUE(live[u]) << "reads freed " << u;
    }
  }
  return peak;
}

class RandomGraphProperty : public ::testing::TestWithParam<uint32_t> {};

TEST_P(RandomGraphProperty, EveryBaselineGivesAValidSimulatedSchedule) {
  const uint32_t seed = GetParam();
  const int32_t layers = 1 + static_cast<int32_t>(seed % 40);
  const Graph g = testing::WithModuleStructure(testing::RandomTrainingGraph(seed, layers));
  const StrategyResult all = CheckpointAll(g, int64_t{1} << 50);
  EXPECT_DOUBLE_EQ(all.cost, g.total_cost());  // nothing is recomputed
  EXPECT_EQ(NoRematPeakBytes(g), all.peak_bytes);  // the linear-time figure is the simulator's
  const int64_t lower_bound = MinimumPeakLowerBound(g);
  // A budget between the lower bound and the no-remat peak.
  const int64_t budget = lower_bound + (all.peak_bytes - lower_bound) / 2;
  for (const StrategySpec& spec : BaselineStrategies()) {
    SCOPED_TRACE(spec.name);
    // Every baseline applies but on graphs too short for a block (a contraction).
    if (!spec.applies(g)) {
      const bool needs_blocks = spec.name == "checkpoint-blocks" ||
                                spec.name == "checkpoint-first-blocks" ||
                                spec.name == "selective-first-blocks";
      const bool needs_contractions = spec.name == "selective" || spec.name == "selective-fit";
      EXPECT_TRUE((needs_blocks && layers <= 2) || (needs_contractions && layers == 1))
          << layers;
      continue;
    }
    const StrategyResult r = spec.run(g, budget);
    EXPECT_TRUE(CheckSchedule(g, r.schedule).empty());
    const Plan plan = BuildPlan(g, r.schedule);
    const SimulationResult sim = Simulate(g, plan);
    EXPECT_EQ(RecountPeak(g, plan), sim.peak_bytes);
    EXPECT_EQ(sim.peak_bytes, r.peak_bytes);
    EXPECT_DOUBLE_EQ(sim.cost, r.cost);
    EXPECT_GE(r.cost, g.total_cost() - 1e-9);
    EXPECT_GE(r.peak_bytes, lower_bound);
    EXPECT_EQ(r.status == FitStatus::kFits, r.peak_bytes <= budget);
    EXPECT_EQ(sim.live_bytes_at_end, 0);
    for (int32_t v = 0; v < g.size(); ++v) EXPECT_GE(sim.evaluations_per_node[v], 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomGraphProperty, ::testing::Range(1u, 201u));

class RandomDagProperty : public ::testing::TestWithParam<uint32_t> {};

TEST_P(RandomDagProperty, CheckpointAllSchedulesUnlabeledDags) {
  const Graph g = testing::RandomUnlabeledDag(GetParam(), 3 + GetParam() % 30);
  const StrategyResult r = CheckpointAll(g, int64_t{1} << 50);
  const Plan plan = BuildPlan(g, r.schedule);
  EXPECT_EQ(RecountPeak(g, plan), r.peak_bytes);
  EXPECT_DOUBLE_EQ(r.cost, g.total_cost());
  EXPECT_GE(r.peak_bytes, MinimumPeakLowerBound(g));
  EXPECT_EQ(NoRematPeakBytes(g), r.peak_bytes);
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomDagProperty, ::testing::Range(1u, 51u));

}  // namespace
}  // namespace remat
