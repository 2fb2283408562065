// The stage-by-stage evaluation against the rules it mirrors: every edit's cost and peak equal
// those of R rebuilt from the edited S and simulated.
#include "strategies/incremental_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/errors.h"
#include "core/plan.h"
#include "core/recompute.h"
#include "core/simulator.h"
#include "testing/random_graphs.h"

namespace remat {
namespace {

SimulationResult Rebuilt(const Graph& g, const StageMatrix& S) {
  return Simulate(g, ScheduleFromCheckpoints(g, S));
}

// The plan's view of each stage's fullest allocation: checks allocation_peak_bytes and
// PeakAllocation against the operations of the rebuilt schedule.
void ExpectAllocationPeaks(const Graph& g, IncrementalSchedule& state) {
  const Plan plan = BuildPlan(g, ScheduleFromCheckpoints(g, state.S()));
  const SimulationResult sim = Simulate(g, plan);
  std::vector<int64_t> most(g.size(), -1);
  std::vector<size_t> first_at(g.size(), 0);
  for (size_t op = 0; op < plan.size(); ++op) {
    if (plan[op].kind != OpKind::kAllocate) continue;
    const int32_t t = plan[op].stage;
    if (sim.live_bytes_after_op[op] > most[t]) {
      most[t] = sim.live_bytes_after_op[op];
      first_at[t] = op;
    }
  }
  for (int32_t t = 0; t < g.size(); ++t) {
    ASSERT_EQ(state.allocation_peak_bytes(t), most[t]) << "stage " << t;
    const IncrementalSchedule::AllocationPeak peak = state.PeakAllocation(t);
    ASSERT_EQ(peak.node, plan[first_at[t]].node) << "stage " << t;
    std::vector<bool> live(g.size(), false);
    for (size_t op = 0; op <= first_at[t]; ++op) {
      if (plan[op].kind == OpKind::kAllocate) live[plan[op].node] = true;
      if (plan[op].kind == OpKind::kFree) live[plan[op].node] = false;
    }
    std::vector<int32_t> expected;
    for (int32_t v = 0; v < g.size(); ++v) {
      if (live[v]) expected.push_back(v);
    }
    ASSERT_EQ(peak.live, expected) << "stage " << t;
  }
}

// A chain a -> b -> c -> d with d also reading a; 4 B each, unit costs, S empty: every stage
// recomputes all its node's ancestors, 1 + 2 + 3 + 4 = 10. Holding a through stages 1..3
// saves its recomputation in each of them: 1 + 1 + 2 + 3 = 7.
TEST(IncrementalScheduleTest, HoldingAValuePricesOnlyTheStagesItReaches) {
  std::vector<Node> nodes(4);
  for (int32_t i = 0; i < 4; ++i) nodes[i] = {.name = std::string(1, 'a' + i), .cost = 1, .bytes = 4};
  const Graph g(nodes, {{0, 1}, {1, 2}, {2, 3}, {0, 3}});
  IncrementalSchedule state(g, StageMatrix(4, 4));
  EXPECT_DOUBLE_EQ(state.cost(), 1 + 2 + 3 + 4);
  EXPECT_EQ(state.peak_bytes(), Rebuilt(g, StageMatrix(4, 4)).peak_bytes);

  const HoldEdit hold{.value = 0, .first = 1, .last = 3, .hold = true};
  const IncrementalSchedule::Outcome outcome = state.Evaluate(std::span(&hold, 1));
  StageMatrix S(4, 4);
  S.SetRun(0, 1, 3);
  const SimulationResult truth = Rebuilt(g, S);
  EXPECT_DOUBLE_EQ(outcome.cost, truth.cost);
  EXPECT_EQ(outcome.peak_bytes, truth.peak_bytes);
  EXPECT_DOUBLE_EQ(state.cost(), 10);  // unchanged until Commit
  state.Commit();
  EXPECT_DOUBLE_EQ(state.cost(), 7);
  EXPECT_DOUBLE_EQ(truth.cost, 7);
  EXPECT_EQ(state.stage_peak_bytes(), truth.stage_peak_bytes);
  EXPECT_EQ(state.Verify().S, S);
}

// Random valid S matrices (no value held at or ahead of its frontier) and random moves of one
// or two columns, committed about half the time: the estimate equals the simulator's every
// time, and Verify (which throws on any disagreement) passes after each commit; the excess over
// a budget and each stage's fullest allocation agree with the plan's operations.
TEST(IncrementalScheduleTest, RandomEditsAgreeWithTheSimulator) {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    const Graph base = seed % 2 ? testing::RandomTrainingGraph(seed, 6 + seed % 9)
                                : testing::RandomUnlabeledDag(seed, 8 + seed % 12, 0.3);
    const Graph g = testing::WithRandomWorkspace(base, seed, 30);
    const int32_t n = g.size();
    std::mt19937 rng(seed);
    auto uniform = [&](int32_t lo, int32_t hi) {
      return std::uniform_int_distribution<int32_t>(lo, hi)(rng);
    };
    StageMatrix S(n, n);
    for (int32_t v = 0; v + 1 < n; ++v) {
      for (int32_t k = uniform(0, 2); k > 0; --k) {
        const int32_t first = uniform(v + 1, n - 1);
        S.SetRun(v, first, uniform(first, n - 1));
      }
    }
    // A budget between the least and the largest stage peak, for the excess.
    const SimulationResult first = Rebuilt(g, S);
    const int64_t budget_bytes = first.peak_bytes * 3 / 4;
    IncrementalSchedule state(g, S, budget_bytes);
    ASSERT_NO_THROW(state.Verify()) << "seed " << seed;
    ExpectAllocationPeaks(g, state);
    for (int move = 0; move < 60; ++move) {
      std::vector<HoldEdit> edits;
      const int32_t columns = uniform(1, 2);
      for (int32_t e = 0; e < columns; ++e) {
        const int32_t v = uniform(0, n - 2);
        if (!edits.empty() && edits[0].value == v) continue;
        const int32_t first = uniform(v + 1, n - 1);
        edits.push_back({.value = v, .first = first, .last = uniform(first, n - 1),
                         .hold = uniform(0, 1) == 1});
      }
      StageMatrix edited = S;
      for (const HoldEdit& e : edits) edited.SetRun(e.value, e.first, e.last, e.hold);
      const SimulationResult truth = Rebuilt(g, edited);
      const IncrementalSchedule::Outcome outcome = state.Evaluate(edits);
      ASSERT_NEAR(outcome.cost, truth.cost, 1e-9 * truth.cost) << "seed " << seed << " move " << move;
      ASSERT_EQ(outcome.peak_bytes, truth.peak_bytes) << "seed " << seed << " move " << move;
      int64_t excess_bytes = 0;
      for (int64_t peak : truth.stage_peak_bytes) {
        excess_bytes += std::max<int64_t>(0, peak - budget_bytes);
      }
      ASSERT_EQ(outcome.excess_bytes, excess_bytes) << "seed " << seed << " move " << move;
      ASSERT_EQ(state.S(), S) << "Evaluate left S changed";
      if (uniform(0, 1) == 1) {
        state.Commit();
        S = edited;
        ASSERT_NO_THROW(state.Verify()) << "seed " << seed << " move " << move;
        ASSERT_EQ(state.S(), S);
        ExpectAllocationPeaks(g, state);
      }
    }
  }
}

// Two edits of one value in one move are a caller's bug, not a move.
TEST(IncrementalScheduleTest, RejectsTwoEditsOfOneValue) {
  const Graph g = testing::RandomTrainingGraph(3, 5);
  IncrementalSchedule state(g, StageMatrix(g.size(), g.size()));
  const std::vector<HoldEdit> edits = {{.value = 0, .first = 2, .last = 3, .hold = true},
                                       {.value = 0, .first = 5, .last = 6, .hold = true}};
  EXPECT_THROW(state.Evaluate(edits), InternalError);
}

}  // namespace
}  // namespace remat
