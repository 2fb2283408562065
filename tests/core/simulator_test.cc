#include "core/simulator.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/plan.h"
#include "core/recompute.h"

namespace remat {
namespace {

Op Alloc(int t, int v) { return {OpKind::kAllocate, t, v}; }
Op Compute(int t, int v) { return {OpKind::kCompute, t, v}; }
Op Free(int t, int v) { return {OpKind::kFree, t, v}; }

// 0 -> 1 -> 2 with 4, 8 and 16 bytes and costs 1, 2, 3; every value held until its consumer.
Graph Chain() {
  return Graph({{.name = "a", .cost = 1, .bytes = 4},
                {.name = "b", .cost = 2, .bytes = 8},
                {.name = "c", .cost = 3, .bytes = 16}},
               {{0, 1}, {1, 2}});
}

TEST(SimulatorTest, ChainWithoutRecomputation) {
  const Graph g = Chain();
  StageMatrix S(3, 3);
  S.Set(1, 0);
  S.Set(2, 1);
  const Schedule schedule = ScheduleFromCheckpoints(g, S);
  const Plan plan = BuildPlan(g, schedule);
  // Stage 0: a (4 B) is allocated and kept for stage 1.
  // Stage 1: b is allocated next to a (12 B); a is freed after b (8 B); b is kept.
  // Stage 2: c is allocated next to b (24 B, the peak); b is freed, then c (last stage).
  const Plan expected = {Alloc(0, 0), Compute(0, 0), Alloc(1, 1), Compute(1, 1), Free(1, 0),
                         Alloc(2, 2), Compute(2, 2), Free(2, 1),  Free(2, 2)};
  EXPECT_EQ(plan, expected);
  const SimulationResult sim = Simulate(g, plan);
  EXPECT_EQ(sim.live_bytes_after_op, (std::vector<int64_t>{4, 4, 12, 12, 8, 24, 24, 16, 0}));
  EXPECT_EQ(sim.peak_bytes, 24);
  EXPECT_DOUBLE_EQ(sim.cost, 6);  // 1 + 2 + 3, nothing recomputed
  EXPECT_EQ(sim.stage_peak_bytes, (std::vector<int64_t>{4, 12, 24}));
  EXPECT_EQ(sim.live_bytes_at_end, 0);
}

TEST(SimulatorTest, DiamondRecomputedInTheLastStage) {
  // 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3; bytes 10, 1, 1, 1; unit costs; nothing held.
  const Graph g({{.cost = 1, .bytes = 10}, {.cost = 1, .bytes = 1}, {.cost = 1, .bytes = 1},
                 {.cost = 1, .bytes = 1}},
                {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  const Schedule schedule = ScheduleFromCheckpoints(g, StageMatrix(4, 4));
  const SimulationResult sim = Simulate(g, schedule);
  // Stage costs 1 + 2 + 2 + 4: node 0 runs in every stage.
  EXPECT_DOUBLE_EQ(sim.cost, 9);
  EXPECT_EQ(sim.evaluations_per_node, (std::vector<int32_t>{4, 2, 2, 1}));
  // Stage 3: 0 (10) + 1 (1) + 2 (1) are live when 2 is allocated: 12 bytes. Then 0 is
  // freed (2), 3 is allocated (3) and everything is released.
  EXPECT_EQ(sim.peak_bytes, 12);
  // Stage 0: 10 bytes; stage 1: 0 and 1 live (11); stage 2: 0 and 2 (11).
  EXPECT_EQ(sim.stage_peak_bytes, (std::vector<int64_t>{10, 11, 11, 12}));
}

TEST(SimulatorTest, HeldValueReusedWhenRecomputedInPlace) {
  // 0 -> 1, 0 -> 2 (bytes 5, 3, 7). Stage 2 both holds and recomputes 0: no new allocation.
  const Graph g({{.cost = 2, .bytes = 5}, {.cost = 1, .bytes = 3}, {.cost = 1, .bytes = 7}},
                {{0, 1}, {0, 2}});
  Schedule s{StageMatrix(3, 3), StageMatrix(3, 3)};
  s.R.Set(0, 0);
  s.R.Set(1, 1);
  s.R.Set(2, 2);
  s.R.Set(2, 0);
  s.S.Set(1, 0);
  s.S.Set(2, 0);
  ASSERT_TRUE(CheckSchedule(g, s).empty());
  const Plan plan = BuildPlan(g, s);
  const Plan expected = {Alloc(0, 0), Compute(0, 0), Alloc(1, 1), Compute(1, 1), Free(1, 1),
                         Compute(2, 0), Alloc(2, 2), Compute(2, 2), Free(2, 0), Free(2, 2)};
  EXPECT_EQ(plan, expected);
  const SimulationResult sim = Simulate(g, plan);
  EXPECT_DOUBLE_EQ(sim.cost, 2 + 1 + 2 + 1);
  EXPECT_EQ(sim.peak_bytes, 12);  // 5 + 7 in stage 2; stage 1 has 5 + 3 = 8
}

TEST(SimulatorTest, WorkspaceCountsAtItsNodesComputeOnly) {
  // The chain of ChainWithoutRecomputation (bytes 4, 8, 16) with workspaces 0, 20 and 3.
  // Stage 1: b runs with a live (4 + 8) and its 20 B of scratch: 32 B, above stage 2's
  // 8 + 16 + 3 = 27 B. The workspace is gone right after b: a's free leaves 8 B.
  std::vector<Node> nodes = Chain().nodes();
  nodes[1].workspace_bytes = 20;
  nodes[2].workspace_bytes = 3;
  const Graph g(std::move(nodes), {{0, 1}, {1, 2}});
  StageMatrix S(3, 3);
  S.Set(1, 0);
  S.Set(2, 1);
  const SimulationResult sim = Simulate(g, ScheduleFromCheckpoints(g, S));
  EXPECT_EQ(sim.live_bytes_after_op, (std::vector<int64_t>{4, 4, 12, 32, 8, 24, 27, 16, 0}));
  EXPECT_EQ(sim.peak_bytes, 32);
  EXPECT_EQ(sim.stage_peak_bytes, (std::vector<int64_t>{4, 32, 27}));
  EXPECT_EQ(sim.live_bytes_at_end, 0);
  EXPECT_DOUBLE_EQ(sim.cost, 6);  // workspace changes memory, never cost
  EXPECT_EQ(NoRematPeakBytes(g), 32);
  EXPECT_EQ(MinimumPeakLowerBound(g), 4 + 8 + 20);
}

TEST(SimulatorTest, ARecomputationPaysItsWorkspaceAgain) {
  // The diamond of DiamondRecomputedInTheLastStage with 5 B of workspace on node 0, which
  // runs in every stage: stage 3 peaks at 0 (10) + 1 (1) + 2 (1) = 12 when 2 runs, and at
  // 10 + 5 = 15 when 0 itself runs (nothing else is live yet).
  std::vector<Node> nodes = {{.cost = 1, .bytes = 10, .workspace_bytes = 5},
                             {.cost = 1, .bytes = 1}, {.cost = 1, .bytes = 1},
                             {.cost = 1, .bytes = 1}};
  const Graph g(std::move(nodes), {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  const SimulationResult sim = Simulate(g, ScheduleFromCheckpoints(g, StageMatrix(4, 4)));
  EXPECT_EQ(sim.peak_bytes, 15);
  EXPECT_EQ(sim.stage_peak_bytes, (std::vector<int64_t>{15, 15, 15, 15}));
}

TEST(SimulatorTest, RejectsReadingAFreedValue) {
  const Graph g = Chain();
  const Plan plan = {Alloc(0, 0), Compute(0, 0), Free(0, 0), Alloc(1, 1), Compute(1, 1)};
  try {
    Simulate(g, plan);
    FAIL() << "expected an error";
  } catch (const InternalError& error) {
    EXPECT_NE(std::string(error.what()).find("operation 4 (compute node 1 'b' in stage 1): input "
                                             "node 0 is not live"),
              std::string::npos)
        << error.what();
  }
}

TEST(SimulatorTest, RejectsDoubleFreeDoubleAllocationAndMissingNodes) {
  const Graph g = Chain();
  EXPECT_THROW(Simulate(g, Plan{Alloc(0, 0), Free(0, 0), Free(0, 0)}), InternalError);
  EXPECT_THROW(Simulate(g, Plan{Alloc(0, 0), Alloc(0, 0)}), InternalError);
  EXPECT_THROW(Simulate(g, Plan{Compute(0, 0)}), InternalError);
  EXPECT_THROW(Simulate(g, Plan{Alloc(1, 0), Compute(1, 0), Alloc(0, 1)}), InternalError);
  // Node 2 is never computed.
  EXPECT_THROW(Simulate(g, Plan{Alloc(0, 0), Compute(0, 0), Alloc(1, 1), Compute(1, 1)}),
               InternalError);
}

}  // namespace
}  // namespace remat
