// The strategy runner: work shared between strategies at one budget gives the same answers,
// and `optimal` answers with its heuristic start when its MILP cannot fit the time.
#include "planning/strategy_runner.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "solvers/lower_bound.h"
#include "testing/budgets.h"
#include "testing/random_graphs.h"
#include "zoo/registry.h"

namespace remat {
namespace {

using testing::MiddleBudget;

TEST(StrategyRunnerTest, ThreadsAreOneToTheCommandLinesLimit) {
  EXPECT_NO_THROW(CheckThreads(1));
  EXPECT_NO_THROW(CheckThreads(kMaxThreads));
  EXPECT_THROW(CheckThreads(0), UsageError);
  EXPECT_THROW(CheckThreads(kMaxThreads + 1), UsageError);
}

TEST(StrategyRunnerTest, RoundingsShareOneLpAndAgreeWithSeparateSolves) {
  const Graph g = testing::RandomTrainingGraph(5, 8);
  const int64_t budget = MiddleBudget(g);
  const SolverSettings settings{.time_limit_s = 30};
  SharedWork shared;
  const StrategyRow a = RunStrategy("approx", g, budget, settings, &shared);
  ASSERT_NE(shared.relaxation, nullptr);
  const StrategyRow r = RunStrategy("approx-randomized", g, budget, settings, &shared);
  EXPECT_NE(r.note.find("LP shared"), std::string::npos) << r.note;
  const StrategyRow alone = RunStrategy("approx-randomized", g, budget, settings);
  EXPECT_EQ(alone.note.find("LP shared"), std::string::npos);
  ASSERT_EQ(r.result.has_value(), alone.result.has_value());
  if (r.result) {
    EXPECT_DOUBLE_EQ(r.result->cost, alone.result->cost);
  }
  // A relaxation for another budget is not reused.
  SharedWork other{.relaxation = shared.relaxation};
  const StrategyRow b = RunStrategy("approx", g, budget + 1, settings, &other);
  EXPECT_EQ(b.note.find("LP shared"), std::string::npos);
  ASSERT_TRUE(a.result.has_value());
}

// 61 nodes: the MILP has about 9,000 columns, more than LpFitsTime allows for 1.5 s, so
// optimal returns local-search's schedule, feasible, with the absence-gap bound below it.
TEST(StrategyRunnerTest, OptimalReturnsItsStartWhenTheMilpCannotFit) {
  const Graph g = testing::RandomTrainingGraph(11, 30);
  ASSERT_FALSE(LpFitsTime(EstimateCheckmateColumns(g), 1.5));
  const int64_t budget = MiddleBudget(g);
  SharedWork shared;
  const SolverSettings settings{.time_limit_s = 2};
  const StrategyRow heuristic = RunStrategy("local-search", g, budget, settings, &shared);
  ASSERT_TRUE(heuristic.fits());
  const StrategyRow row = RunStrategy("optimal", g, budget, settings, &shared);
  ASSERT_TRUE(row.fits()) << row.note;
  EXPECT_EQ(row.solver_status, "feasible");
  EXPECT_NE(row.note.find("MILP skipped"), std::string::npos) << row.note;
  EXPECT_DOUBLE_EQ(row.result->cost, heuristic.result->cost);  // the shared start, as is
  ASSERT_TRUE(row.own_bound.has_value());
  EXPECT_GE(*row.own_bound, g.total_cost() - 1e-9);
  EXPECT_LE(*row.own_bound, row.result->cost + 1e-6);
}

// Issue 24, item 10: optimal never answers with a schedule costlier than the best one found
// before it in the same command. Here the whole MILP runs without a start (--no-mip-start on a
// small model) and a cheaper schedule is planted as found before it (the local-search schedule
// at a cost no schedule reaches): optimal reports that one, as feasible, and says so.
TEST(StrategyRunnerTest, OptimalNeverAnswersCostlierThanTheBestFoundBeforeIt) {
  const Graph g = testing::RandomTrainingGraph(5, 8);
  const int64_t budget = MiddleBudget(g);
  const SolverSettings settings{.time_limit_s = 30, .mip_start = false};
  ASSERT_TRUE(LpFitsTime(EstimateCheckmateColumns(g), settings.time_limit_s / 4));
  SharedWork shared;
  const StrategyRow heuristic = RunStrategy("local-search", g, budget, settings, &shared);
  ASSERT_TRUE(heuristic.fits());
  ASSERT_TRUE(shared.best);
  EXPECT_DOUBLE_EQ(shared.best->cost, heuristic.result->cost);  // every row is offered
  shared.best->cost = 0.5 * g.total_cost();
  const StrategyRow row = RunStrategy("optimal", g, budget, settings, &shared);
  ASSERT_TRUE(row.fits()) << row.note;
  EXPECT_DOUBLE_EQ(row.result->cost, 0.5 * g.total_cost());
  EXPECT_EQ(row.result->strategy, "optimal");
  // The kept schedule's status is its verdict against the solver's bound: this cost, made up
  // below every schedule's, meets any bound and reads optimal; a real start above it feasible.
  ASSERT_TRUE(row.own_bound);
  EXPECT_EQ(row.solver_status,
            WithinGap(row.result->cost, *row.own_bound, kProvenGap) ? "optimal" : "feasible");
  EXPECT_NE(row.note.find("kept local-search's schedule"), std::string::npos) << row.note;
}

// Issue 35, item 2: the checkpointing people write by hand is in every portfolio. At the peak
// of checkpointing every block, and at selective recomputation's, local-search and optimal,
// each run alone (as wrap and backend run them), answer no costlier.
TEST(StrategyRunnerTest, HeuristicsAndOptimalAreNeverCostlierThanModuleCheckpointing) {
  const Graph g = BuildModelTrainingGraph(
      "transformer",
      {.batch = 2, .seq_length = 64, .layers = 4, .hidden = 64, .heads = 4, .vocab = 1000});
  for (const std::string baseline : {"checkpoint-blocks", "selective"}) {
    SCOPED_TRACE(baseline);
    const StrategyRow hand = RunStrategy(baseline, g, int64_t{1} << 50, {});
    ASSERT_TRUE(hand.fits());
    const int64_t budget = hand.result->peak_bytes;
    for (const std::string name : {"local-search", "optimal"}) {
      const StrategyRow row = RunStrategy(name, g, budget, {.time_limit_s = 10});
      ASSERT_TRUE(row.fits()) << name << ": " << row.note;
      EXPECT_LE(row.result->cost, hand.result->cost * (1 + 1e-12)) << name;
    }
  }
  EXPECT_TRUE(StrategyApplies("checkpoint-blocks", g));
  EXPECT_FALSE(StrategyApplies("checkpoint-blocks", testing::RandomTrainingGraph(3, 6)));
  const std::vector<std::string> all = ParseStrategyList("all", testing::RandomTrainingGraph(3, 6));
  EXPECT_EQ(std::count(all.begin(), all.end(), "checkpoint-blocks"), 0);
}

TEST(StrategyRunnerTest, RunOrderPutsOptimalLast) {
  EXPECT_EQ(RunOrder({"optimal", "evict", "approx"}), (std::vector<size_t>{1, 2, 0}));
  EXPECT_EQ(RunOrder({"evict", "approx"}), (std::vector<size_t>{0, 1}));
}

}  // namespace
}  // namespace remat
