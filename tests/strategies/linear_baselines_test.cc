// The acceptance numbers of issue 2 on the paper's linear(8) graph.
#include <gtest/gtest.h>

#include "core/simulator.h"
#include "core/training_graph.h"
#include "strategies/checkpoint_all.h"
#include "strategies/checkpoints.h"
#include "strategies/chen.h"

namespace remat {
namespace {

constexpr int64_t kNoLimit = int64_t{1} << 60;

TEST(LinearBaselinesTest, CheckpointAllCosts17WithPeak10) {
  // 17 unit nodes each run once. At bwd(7) (node 9) the 8 forward outputs, the loss and the
  // new gradient are live: 10 bytes.
  const Graph g = LinearGraph(8);
  const StrategyResult r = CheckpointAll(g, kNoLimit);
  EXPECT_DOUBLE_EQ(r.cost, 17);
  EXPECT_EQ(r.peak_bytes, 10);
  EXPECT_EQ(r.status, FitStatus::kFits);
  EXPECT_EQ(CheckpointAll(g, 9).status, FitStatus::kOverBudget);
}

TEST(LinearBaselinesTest, ChenSqrtNKeeps1357AndRecomputesTheOthersOnce) {
  const Graph g = LinearGraph(8);
  for (CandidateSet set : {CandidateSet::kLinearized, CandidateSet::kArticulationPoints}) {
    SCOPED_TRACE(static_cast<int>(set));
    const StrategyResult r = ChenSqrtN(g, 7, set);
    EXPECT_NE(r.parameters.find("checkpoints: 1 3 5 7"), std::string::npos) << r.parameters;
    const SimulationResult sim = Simulate(g, r.schedule);
    // Forward nodes 0, 2, 4, 6 run twice (forward pass and once in the backward pass);
    // every other node runs once: 17 + 4 = 21.
    for (int32_t v = 0; v < g.size(); ++v) {
      const int expected = (v < 8 && v % 2 == 0) ? 2 : 1;
      EXPECT_EQ(sim.evaluations_per_node[v], expected) << "node " << v;
    }
    EXPECT_DOUBLE_EQ(r.cost, 21);
    EXPECT_LE(r.peak_bytes, 7);
    EXPECT_EQ(r.status, FitStatus::kFits);
    EXPECT_NEAR(r.cost / CheckpointAll(g, kNoLimit).cost, 21.0 / 17.0, 1e-12);
  }
}

TEST(DescribeCheckpointsTest, ShortListsInFullLongOnesAbridged) {
  EXPECT_EQ(DescribeCheckpoints({false, true, false, true}), "checkpoints: 1 3");
  EXPECT_EQ(DescribeCheckpoints({false, false}), "no checkpoints");
  std::vector<bool> many(100, false);
  for (int32_t id = 0; id < 100; id += 4) many[id] = true;  // 25 checkpoints
  EXPECT_EQ(DescribeCheckpoints(many),
            "checkpoints: 0 4 8 12 16 20 24 28 32 36 ... 96 (25 in all)");
}

// Issue 14, defect 6: a schedule is stored in runs of stages, so checkpoint-all on a
// 100,001-node chain (about 1.25 billion held value-stages, 2.5 GB as dense bits) takes a few
// runs per node, validates, and simulates to the no-remat peak.
TEST(LargeGraphTest, CheckpointAllOnA100001NodeChainIsStoredInRuns) {
  const Graph g = LinearGraph(50000);
  const StrategyResult r = CheckpointAll(g, kNoLimit);
  int64_t runs = 0;
  for (int32_t v = 0; v < g.size(); ++v) {
    runs += static_cast<int64_t>(r.schedule.R.Runs(v).size() + r.schedule.S.Runs(v).size());
  }
  EXPECT_LE(runs, 2 * int64_t{g.size()});
  EXPECT_GT(r.schedule.S.CountOnes(), int64_t{1'000'000'000});
  EXPECT_EQ(r.peak_bytes, NoRematPeakBytes(g));
  EXPECT_EQ(r.cost, g.total_cost());
}

}  // namespace
}  // namespace remat
