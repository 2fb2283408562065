#include "solvers/checkmate_model.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/errors.h"
#include "core/simulator.h"
#include "core/training_graph.h"
#include "solvers/checkmate_solver.h"
#include "solvers/clp_lp.h"
#include "strategies/registry.h"
#include "testing/random_graphs.h"

namespace remat {
namespace {

// The model's memory rows describe exactly what the simulator measures: every baseline's
// schedule, written as a full assignment, satisfies the model at a budget equal to its own
// simulated peak and violates it one byte lower.
void ExpectBaselinesTightlyFeasible(const Graph& unlabeled) {
  // Module structure, so that checkpoint-blocks and selective are among the baselines.
  const Graph g = testing::WithModuleStructure(unlabeled);
  for (const StrategySpec& spec : BaselineStrategies()) {
    SCOPED_TRACE(spec.name);
    if (!spec.applies(g)) continue;
    const StrategyResult r = spec.run(g, int64_t{1} << 40);
    const CheckmateModel at_peak = BuildCheckmateModel(g, r.peak_bytes);
    const std::vector<double> values = at_peak.Assignment(g, r.schedule);
    EXPECT_LE(at_peak.lp.MaxViolation(values), 1e-9);
    // The objective counts every evaluation: the simulator's cost.
    EXPECT_NEAR(at_peak.CostOf(at_peak.lp.Objective(values)), r.cost, 1e-9 * r.cost);
    const CheckmateModel below = BuildCheckmateModel(g, r.peak_bytes - 1);
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

INSTANTIATE_TEST_SUITE_P(Seeds, ModelMatchesSimulator, ::testing::Range(1u, 31u));

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
