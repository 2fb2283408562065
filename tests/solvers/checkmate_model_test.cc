#include "solvers/checkmate_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/evaluated_schedule.h"
#include "core/recompute.h"
#include "core/simulator.h"
#include "core/training_graph.h"
#include "solvers/brute_force.h"
#include "solvers/cbc_mip.h"
#include "solvers/checkmate_solver.h"
#include "solvers/clp_lp.h"
#include "strategies/checkpoint_all.h"
#include "strategies/registry.h"
#include "testing/random_graphs.h"

namespace remat {
namespace {

// The model's memory rows describe exactly what the simulator measures: every baseline's
// schedule, written as a full assignment, satisfies the model at a budget equal to its own
// simulated peak and violates it one byte lower.
void ExpectBaselinesTightlyFeasible(const Graph& unlabeled,
                                    const CheckmateModelOptions& options = {}) {
  // Module structure, so that checkpoint-blocks and selective are among the baselines.
  const Graph g = testing::WithModuleStructure(unlabeled);
  for (const StrategySpec& spec : BaselineStrategies()) {
    SCOPED_TRACE(spec.name);
    if (!spec.applies(g)) continue;
    const StrategyResult r = spec.run(g, int64_t{1} << 40);
    const CheckmateModel at_peak = BuildCheckmateModel(g, r.peak_bytes, options);
    const std::vector<double> values = at_peak.Assignment(g, r.schedule);
    EXPECT_LE(at_peak.lp.MaxViolation(values), 1e-9);
    // The objective counts every evaluation: the simulator's cost.
    EXPECT_NEAR(at_peak.CostOf(at_peak.lp.Objective(values)), r.cost, 1e-9 * r.cost);
    const CheckmateModel below = BuildCheckmateModel(g, r.peak_bytes - 1, options);
    EXPECT_GT(below.lp.MaxViolation(below.Assignment(g, r.schedule)), 0.5);
  }
}

class ModelMatchesSimulator : public ::testing::TestWithParam<uint32_t> {};

TEST_P(ModelMatchesSimulator, BaselineAssignmentsAreTightlyFeasible) {
  const uint32_t seed = GetParam();
  ExpectBaselinesTightlyFeasible(
      testing::RandomTrainingGraph(seed, 2 + static_cast<int32_t>(seed % 10)));
}

TEST_P(ModelMatchesSimulator, AndWithWorkspaceOnRandomNodes) {
  const uint32_t seed = GetParam();
  ExpectBaselinesTightlyFeasible(testing::WithRandomWorkspace(
      testing::RandomTrainingGraph(seed, 2 + static_cast<int32_t>(seed % 10)), seed, 60));
}

// Every FREE bound through a later-reader chain (docs/solvers.md, "FREE bounds").
constexpr CheckmateModelOptions kChainEverywhere{.later_reader_chain_from = 1};
constexpr CheckmateModelOptions kNoChain{.later_reader_chain_from = INT32_MAX};

TEST_P(ModelMatchesSimulator, AndWithEveryFreeBoundByItsChain) {
  const uint32_t seed = GetParam();
  ExpectBaselinesTightlyFeasible(
      testing::RandomTrainingGraph(seed, 2 + static_cast<int32_t>(seed % 10)), kChainEverywhere);
}

INSTANTIATE_TEST_SUITE_P(Seeds, ModelMatchesSimulator, ::testing::Range(1u, 31u));

// The LP relaxation's optimum with and without the chains, at every fourth budget from the
// least feasible to the no-remat peak.
void ExpectSameLpOptimum(const Graph& g, const CheckmateModelOptions& chain) {
  const int64_t no_remat = CheckpointAll(g, int64_t{1} << 50).peak_bytes;
  for (int64_t budget = MinimumPeakLowerBound(g); budget <= no_remat; budget += 4) {
    SCOPED_TRACE(::testing::Message() << "budget " << budget);
    CheckmateModelOptions relaxed = chain;
    relaxed.integer = false;
    CheckmateModelOptions plain = kNoChain;
    plain.integer = false;
    const SolverOutput with = SolveLpWithClp(BuildCheckmateModel(g, budget, relaxed).lp, {});
    const SolverOutput without = SolveLpWithClp(BuildCheckmateModel(g, budget, plain).lp, {});
    ASSERT_EQ(with.status, without.status);
    if (with.status == SolveStatus::kOptimal) {
      EXPECT_NEAR(with.objective, without.objective, 1e-7 * std::max(1.0, without.objective));
    }
  }
}

TEST(CheckmateModelTest, TheChainsKeepTheLpOptimumOnRandomDags) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    ExpectSameLpOptimum(testing::RandomUnlabeledDag(seed, 14, 0.5), kChainEverywhere);
  }
}

// A value x read by 12 consumers c1 -> c2 -> ... -> c12, then three nodes that do not read
// it, then a sink that reads every consumer (so each may be computed again in those late
// stages): there the FREE rows of x at the consumers' positions are quadratic in the consumers
// without the chain, linear with it.
Graph FanOut(int32_t consumers) {
  std::vector<Node> nodes{{.name = "x", .cost = 3, .bytes = 4}};
  std::vector<Edge> edges;
  for (int32_t j = 1; j <= consumers; ++j) {
    nodes.push_back({.name = fmt::format("c{}", j), .cost = 1.0 + j % 3, .bytes = 1 + j % 4});
    edges.push_back({0, j});
    if (j > 1) edges.push_back({j - 1, j});
  }
  for (int32_t d = 1; d <= 3; ++d) {
    nodes.push_back({.name = fmt::format("d{}", d), .cost = 2, .bytes = 3});
    edges.push_back({consumers + d - 1, consumers + d});
  }
  const int32_t sink = consumers + 4;
  nodes.push_back({.name = "sink", .cost = 1, .bytes = 1});
  for (int32_t j = 1; j <= consumers + 3; ++j) edges.push_back({j, sink});
  return Graph(std::move(nodes), std::move(edges));
}

TEST(CheckmateModelTest, AWideFanOutGetsLinearRowsAndTheSameOptimum) {
  const Graph g = FanOut(12);
  const int64_t budget = MinimumPeakLowerBound(g) + 3;
  const CheckmateModel chained = BuildCheckmateModel(g, budget);  // 12 >= the default 8
  const CheckmateModel plain = BuildCheckmateModel(g, budget, kNoChain);
  EXPECT_LT(chained.size.rows, plain.size.rows);
  EXPECT_LT(chained.size.nonzeros, plain.size.nonzeros);
  ExpectSameLpOptimum(g, {});
  const SolverOutput a = SolveMipWithCbc(chained.lp, {}, {.time_limit_s = 60});
  const SolverOutput b = SolveMipWithCbc(plain.lp, {}, {.time_limit_s = 60});
  ASSERT_EQ(a.status, SolveStatus::kOptimal);
  ASSERT_EQ(b.status, SolveStatus::kOptimal);
  EXPECT_NEAR(chained.CostOf(a.objective), plain.CostOf(b.objective), 1e-9);
}

// The MILP with every FREE bound by its chain reaches the brute-force optimum at every budget.
TEST(CheckmateModelTest, TheChainsKeepTheMilpOptimum) {
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    const Graph g = testing::RandomUnlabeledDag(seed, 6, 0.6);
    const auto outcomes = testing::AllSchedules(g);
    const int64_t no_remat = CheckpointAll(g, int64_t{1} << 50).peak_bytes;
    for (int64_t budget = testing::LeastPeak(outcomes); budget <= no_remat; ++budget) {
      SCOPED_TRACE(::testing::Message() << "budget " << budget);
      const CheckmateModel model = BuildCheckmateModel(g, budget, kChainEverywhere);
      const SolverOutput out = SolveMipWithCbc(model.lp, {}, {.time_limit_s = 60});
      ASSERT_EQ(out.status, SolveStatus::kOptimal) << out.message;
      EXPECT_NEAR(model.CostOf(out.objective), testing::OracleCost(outcomes, budget), 1e-9);
      const StrategyResult decoded = EvaluateSchedule(
          g, "chain", ScheduleFromCheckpoints(g, model.DecodeS(out.values)), budget, "");
      EXPECT_EQ(decoded.status, FitStatus::kFits);
      EXPECT_NEAR(decoded.cost, testing::OracleCost(outcomes, budget), 1e-9);
    }
  }
}

TEST(CheckmateModelTest, ScalesBytesAndBudgetByTheirGcd) {
  // Bytes 8, 12, 4, ...: gcd 4; a budget of 30 bytes becomes 7 units (rounded down).
  ForwardGraph forward;
  forward.nodes = {{.name = "a", .cost = 2, .bytes = 8}, {.name = "b", .cost = 4, .bytes = 12}};
  forward.edges = {{0, 1}};
  forward.loss_bytes = 4;
  const CheckmateModel model = BuildCheckmateModel(BuildTrainingGraph(forward), 30);
  EXPECT_EQ(model.byte_scale, 4);
  EXPECT_EQ(model.scaled_budget, 7);
  EXPECT_DOUBLE_EQ(model.cost_scale, 2);  // costs 2, 4, 0, 8, 4 have gcd 2
}

TEST(CheckmateModelTest, OnlyRAndSAreInteger) {
  const Graph g = LinearGraph(6);  // 13 nodes
  const CheckmateModel model = BuildCheckmateModel(g, 8);
  // R[t][i] and S[t][i] for i < t: 2 * 13 * 12 / 2 binaries (no node is ever dead here).
  EXPECT_EQ(model.size.integer_columns, 13 * 12);
  EXPECT_LT(model.size.integer_columns, model.full_size.integer_columns);
  EXPECT_LT(model.size.columns, model.full_size.columns);
}

TEST(CheckmateModelTest, LastPossibleUseFixesDeadValues) {
  // 0 -> 1, 0 -> 2 with 1 a dead end: nothing ever needs 1 after stage 1.
  const Graph g({{}, {}, {}}, {{0, 1}, {0, 2}});
  EXPECT_EQ(LastPossibleUse(g), (std::vector<int32_t>{2, 1, 2}));
  const CheckmateModel model = BuildCheckmateModel(g, 10);
  EXPECT_EQ(model.S(2, 1), CheckmateModel::kAbsent);
  EXPECT_EQ(model.R(2, 1), CheckmateModel::kAbsent);
  EXPECT_NE(model.S(2, 0), CheckmateModel::kAbsent);
}

TEST(CheckmateModelTest, CliqueAncestorRowsRaiseTheLpBoundOfATightChain) {
  // linear(8) at 4 bytes: each backward stage allocates itself and reads two values, so one more
  // value fits beside them. Without the rows the LP spreads that one slot over several values
  // and pays 23; the optimum is 26 (9 recomputations) and the rows lift the LP to 25 1/3.
  const Graph g = LinearGraph(8);
  const CheckmateModel with = BuildCheckmateModel(g, 4, {.integer = false});
  const CheckmateModel without =
      BuildCheckmateModel(g, 4, {.integer = false, .clique_ancestor_rows = false});
  EXPECT_GT(with.size.rows, without.size.rows);
  const SolverOutput lp_with = SolveLpWithClp(with.lp, {});
  const SolverOutput lp_without = SolveLpWithClp(without.lp, {});
  ASSERT_EQ(lp_with.status, SolveStatus::kOptimal);
  ASSERT_EQ(lp_without.status, SolveStatus::kOptimal);
  EXPECT_NEAR(without.CostOf(lp_without.objective), 23, 1e-6);
  EXPECT_NEAR(with.CostOf(lp_with.objective), 25 + 1.0 / 3, 1e-6);
  // 26 is also what the model without the rows proves (the formulation the oracle tests check).
  const OptimizerResult optimum = SolveOptimal(g, 4);
  ASSERT_EQ(optimum.status, SolveStatus::kOptimal);
  EXPECT_DOUBLE_EQ(optimum.schedule->cost, 26);
}

TEST(CheckmateModelTest, RejectsNegativeBudget) {
  EXPECT_THROW(BuildCheckmateModel(LinearGraph(2), -1), InputError);
}

}  // namespace
}  // namespace remat
