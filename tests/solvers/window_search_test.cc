// Window models are the whole model with S fixed outside the window: the incumbent satisfies
// them at its own cost, their optimum equals a brute-force search over the window's S, and the
// search built on them only ever returns cheaper fitting schedules.
#include "solvers/window_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "core/errors.h"
#include "core/recompute.h"
#include "core/simulator.h"
#include "core/training_graph.h"
#include "solvers/cbc_mip.h"
#include "solvers/checkmate_solver.h"
#include "strategies/best_heuristic.h"
#include "strategies/checkpoint_all.h"
#include "strategies/registry.h"
#include "testing/random_graphs.h"

namespace remat {
namespace {

// The cost of the stages first..last of a schedule (frontier and recomputations).
double WindowCost(const Graph& g, const Schedule& schedule, StageWindow w) {
  double cost = 0;
  for (int32_t t = w.first; t <= w.last; ++t) {
    for (int32_t i = 0; i <= t; ++i) {
      if (schedule.R.Get(t, i)) cost += g.node(i).cost;
    }
  }
  return cost;
}

// A fitting schedule below the no-remat peak, to give windows something to improve: the
// heuristics' best at 70% of checkpoint-all's peak, or checkpoint-all itself.
StrategyResult SomeFittingSchedule(const Graph& g, int64_t* budget) {
  const StrategyResult all = CheckpointAll(g, int64_t{1} << 50);
  *budget = all.peak_bytes * 7 / 10;
  StrategyResult r = BestHeuristic(g, *budget, {.time_limit_s = 5});
  if (r.status != FitStatus::kFits) {
    *budget = all.peak_bytes;
    r = all;
  }
  return r;
}

TEST(WindowModelTest, TheWindowOfEveryStageIsTheWholeModel) {
  const Graph g = testing::RandomTrainingGraph(3, 5);
  const StrategyResult all = CheckpointAll(g, int64_t{1} << 50);
  const CheckmateModel whole = BuildCheckmateModel(g, all.peak_bytes);
  const CheckmateModel window =
      BuildWindowModel(g, all.peak_bytes, all.schedule, {0, g.size() - 1});
  EXPECT_EQ(window.size.columns, whole.size.columns);
  EXPECT_EQ(window.size.rows, whole.size.rows);
  EXPECT_EQ(window.size.nonzeros, whole.size.nonzeros);
}

TEST(WindowModelTest, RejectsWindowsOutsideTheStages) {
  const Graph g = LinearGraph(3);
  const Schedule s = CheckpointAll(g, 100).schedule;
  EXPECT_THROW(BuildWindowModel(g, 100, s, {2, 1}), InputError);
  EXPECT_THROW(BuildWindowModel(g, 100, s, {0, g.size()}), InputError);
  EXPECT_THROW(BuildWindowModel(g, 100, s, {-1, 0}), InputError);
}

// The incumbent, written into any window, satisfies every row and its objective is the
// window's share of the simulated cost.
class IncumbentInEveryWindow : public ::testing::TestWithParam<uint32_t> {};

TEST_P(IncumbentInEveryWindow, IsFeasibleAtItsOwnCost) {
  const Graph g = testing::RandomTrainingGraph(GetParam(), 3 + GetParam() % 4);
  int64_t budget = 0;
  const StrategyResult start = SomeFittingSchedule(g, &budget);
  const Schedule fixed = WithoutUselessHolds(g, start.schedule);
  for (int32_t first = 0; first < g.size(); ++first) {
    for (int32_t last = first; last < g.size(); ++last) {
      SCOPED_TRACE(::testing::Message() << "window " << first << ".." << last);
      const CheckmateModel model = BuildWindowModel(g, budget, fixed, {first, last});
      ASSERT_FALSE(model.proven_infeasible);
      const std::vector<double> values = model.Assignment(g, fixed);
      EXPECT_LE(model.lp.MaxViolation(values), 1e-9);
      EXPECT_NEAR(model.CostOf(model.lp.Objective(values)),
                  WindowCost(g, fixed, {first, last}), 1e-9);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, IncumbentInEveryWindow, ::testing::Range(1u, 9u));

// Brute force over every S of the window's free stages (the rest fixed): the cheapest fitting
// schedule's cost.
double BruteForceWindow(const Graph& g, int64_t budget, const Schedule& fixed, StageWindow w) {
  const std::vector<int32_t> last = LastPossibleUse(g);
  std::vector<std::pair<int32_t, int32_t>> cells;
  for (int32_t t = w.first + 1; t <= w.last; ++t) {
    for (int32_t i = 0; i < t; ++i) {
      if (t <= last[i]) cells.emplace_back(t, i);
    }
  }
  EXPECT_LE(cells.size(), 18u);
  double best = std::numeric_limits<double>::infinity();
  for (uint64_t bits = 0; bits < (uint64_t{1} << cells.size()); ++bits) {
    StageMatrix S = fixed.S;
    for (int32_t i = 0; i < g.size(); ++i) S.SetRun(i, w.first + 1, w.last, false);
    for (size_t k = 0; k < cells.size(); ++k) {
      if (bits >> k & 1) S.Set(cells[k].first, cells[k].second);
    }
    const SimulationResult sim = Simulate(g, ScheduleFromCheckpoints(g, std::move(S)));
    if (sim.peak_bytes <= budget) best = std::min(best, sim.cost);
  }
  return best;
}

class WindowOptimumMatchesOracle : public ::testing::TestWithParam<uint32_t> {};

TEST_P(WindowOptimumMatchesOracle, OnTinyGraphs) {
  // 7 nodes; even seeds with workspace on some of them.
  const Graph plain = testing::RandomTrainingGraph(GetParam(), 3);
  const Graph g =
      GetParam() % 2 == 0 ? testing::WithRandomWorkspace(plain, GetParam(), 80) : plain;
  int64_t budget = 0;
  const StrategyResult start = SomeFittingSchedule(g, &budget);
  const Schedule fixed = WithoutUselessHolds(g, start.schedule);
  for (StageWindow w : {StageWindow{1, 3}, StageWindow{2, 4}, StageWindow{3, 5},
                        StageWindow{4, 6}, StageWindow{0, 2}}) {
    SCOPED_TRACE(::testing::Message() << "window " << w.first << ".." << w.last);
    const CheckmateModel model = BuildWindowModel(g, budget, fixed, w);
    const SolverOutput out =
        SolveMipWithCbc(model.lp, model.Assignment(g, fixed), {.time_limit_s = 30});
    ASSERT_EQ(out.status, SolveStatus::kOptimal) << out.message;
    const StrategyResult decoded = EvaluateSchedule(
        g, "window", ScheduleFromCheckpoints(g, model.DecodeS(out.values, 0.5, &fixed.S)),
        budget, "");
    EXPECT_EQ(decoded.status, FitStatus::kFits);
    EXPECT_DOUBLE_EQ(decoded.cost, BruteForceWindow(g, budget, fixed, w));
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, WindowOptimumMatchesOracle, ::testing::Range(1u, 7u));

// The elastic model accepts an over-budget schedule with its overflow as the slack: exactly the
// simulated peak's excess when the window is every stage, and zero when the schedule fits.
class ElasticModel : public ::testing::TestWithParam<uint32_t> {};

TEST_P(ElasticModel, SlackIsTheOverflowOfTheSimulatedPeak) {
  const Graph plain = testing::RandomTrainingGraph(GetParam(), 3 + GetParam() % 5);
  const Graph g =
      GetParam() % 2 == 0 ? testing::WithRandomWorkspace(plain, GetParam(), 80) : plain;
  const StrategyResult all = CheckpointAll(g, int64_t{1} << 50);
  const Schedule s = WithoutUselessHolds(g, all.schedule);
  for (int64_t budget : {all.peak_bytes, all.peak_bytes - 1, all.peak_bytes * 3 / 4}) {
    const CheckmateModel model =
        BuildWindowModel(g, budget, s, {0, g.size() - 1}, {.elastic = true});
    ASSERT_GE(model.slack_column, 0);
    const std::vector<double> values = model.Assignment(g, s);
    EXPECT_LE(model.lp.MaxViolation(values), 1e-9);
    const double overflow = static_cast<double>(all.peak_bytes) / model.byte_scale -
                            static_cast<double>(budget / model.byte_scale);
    EXPECT_NEAR(values[model.slack_column], std::max(0.0, overflow), 1e-9) << "budget " << budget;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, ElasticModel, ::testing::Range(1u, 11u));

// Windows grow up to the whole model, so a start over the budget is repaired whenever some
// schedule fits (the MILP says which budgets those are).
class RepairByWindowsProperty : public ::testing::TestWithParam<uint32_t> {};

TEST_P(RepairByWindowsProperty, FindsAFittingScheduleWhereTheMilpDoes) {
  const Graph g = testing::RandomTrainingGraph(GetParam(), 3 + GetParam() % 4);
  const StrategyResult all = CheckpointAll(g, int64_t{1} << 50);
  for (int64_t budget = MinimumPeakLowerBound(g); budget < all.peak_bytes;
       budget += std::max<int64_t>(1, (all.peak_bytes - budget) / 3)) {
    SCOPED_TRACE(::testing::Message() << "budget " << budget);
    StrategyResult over = all;
    over.status = FitStatus::kOverBudget;
    const RepairResult repair =
        RepairByWindows(g, budget, over, {.time_limit_s = 30, .window_columns = 100});
    const std::optional<StrategyResult>& repaired = repair.fitting;
    const OptimizerResult exact = SolveOptimal(g, budget, {.mip = {.time_limit_s = 30}});
    if (exact.status == SolveStatus::kInfeasible) {
      EXPECT_FALSE(repaired.has_value());
      continue;
    }
    ASSERT_EQ(exact.status, SolveStatus::kOptimal);
    ASSERT_TRUE(repaired.has_value());
    EXPECT_GT(repair.windows, 0);
    EXPECT_GT(repair.excess_before, 0);
    EXPECT_EQ(repair.excess_after, 0);
    EXPECT_EQ(repaired->status, FitStatus::kFits);
    const SimulationResult sim = Simulate(g, repaired->schedule);
    EXPECT_LE(sim.peak_bytes, budget);
    EXPECT_DOUBLE_EQ(sim.cost, repaired->cost);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RepairByWindowsProperty, ::testing::Range(1u, 7u));

TEST(WithoutUselessHoldsTest, NeverCostsMoreNorPeaksHigher) {
  std::mt19937 rng(7);
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    const Graph g = testing::RandomTrainingGraph(seed, 2 + seed % 6);
    StageMatrix S(g.size(), g.size());
    std::bernoulli_distribution hold(0.4);
    for (int32_t t = 1; t < g.size(); ++t) {
      for (int32_t i = 0; i < t; ++i) {
        if (hold(rng)) S.Set(t, i);
      }
    }
    const Schedule original = ScheduleFromCheckpoints(g, S);
    const Schedule cleaned = WithoutUselessHolds(g, original);
    const SimulationResult a = Simulate(g, original);
    const SimulationResult b = Simulate(g, cleaned);
    EXPECT_LE(b.cost, a.cost) << "seed " << seed;
    EXPECT_LE(b.peak_bytes, a.peak_bytes) << "seed " << seed;
  }
}

TEST(WindowSearchTest, ReachesTheOptimumOfLinearEightWhenWindowsGrowToTheWholeGraph) {
  // linear(8) at 6 B: optimum 21 (issue 4). Windows start tiny and double up to the whole model.
  const Graph g = LinearGraph(8);
  const StrategyResult fitting = BestHeuristic(g, 6, {.time_limit_s = 5});
  ASSERT_EQ(fitting.status, FitStatus::kFits);
  const WindowSearchResult r =
      ImproveByWindows(g, 6, fitting, {.time_limit_s = 60, .window_columns = 200});
  EXPECT_EQ(r.best.status, FitStatus::kFits);
  EXPECT_DOUBLE_EQ(r.best.cost, 21);
  EXPECT_TRUE(r.local_optimum);
  EXPECT_LE(r.best.cost, fitting.cost);
}

// linear(8) at 6 B recomputes: with max_window_columns below the model of every stage that
// recomputes, no window is centred anywhere, the search says so and claims nothing; with the
// cap at the largest stage's model the same call tries windows, also when its first size is
// below every such stage (the size grows to them).
TEST(WindowSearchTest, StagesLargerThanTheCapGetNoWindow) {
  const Graph g = LinearGraph(8);
  const StrategyResult fitting = BestHeuristic(g, 6, {.time_limit_s = 5});
  ASSERT_EQ(fitting.status, FitStatus::kFits);
  ASSERT_GT(fitting.cost, g.total_cost());
  const std::vector<int64_t> per_stage = WindowColumnsPerStage(g);
  const int64_t largest = *std::max_element(per_stage.begin(), per_stage.end());
  int64_t cap = largest;  // below the smallest model of a stage that recomputes
  for (int32_t t = 0; t < g.size(); ++t) {
    for (int32_t i = 0; i < t; ++i) {
      if (fitting.schedule.R.Get(t, i)) cap = std::min(cap, per_stage[t] - 1);
    }
  }
  ASSERT_LT(cap, largest);
  const std::vector<int64_t> peaks = Simulate(g, fitting.schedule).stage_peak_bytes;
  EXPECT_TRUE(CandidateWindows(g, fitting.schedule, peaks, cap).empty());
  EXPECT_FALSE(CandidateWindows(g, fitting.schedule, peaks, largest).empty());
  // No window is larger than the size asked for.
  for (int64_t columns = cap; columns <= largest; ++columns) {
    for (const StageWindow& w : CandidateWindows(g, fitting.schedule, peaks, columns)) {
      int64_t size = 0;
      for (int32_t t = w.first; t <= w.last; ++t) size += per_stage[t];
      EXPECT_LE(size, columns) << w.first << ".." << w.last;
    }
  }
  const WindowSearchResult capped = ImproveByWindows(
      g, 6, fitting, {.time_limit_s = 30, .window_columns = cap, .max_window_columns = cap});
  EXPECT_TRUE(capped.too_large);
  EXPECT_FALSE(capped.local_optimum);
  EXPECT_EQ(capped.windows, 0);
  EXPECT_DOUBLE_EQ(capped.best.cost, fitting.cost);
  const WindowSearchResult open = ImproveByWindows(
      g, 6, fitting, {.time_limit_s = 30, .window_columns = largest, .max_window_columns = largest});
  EXPECT_FALSE(open.too_large);
  EXPECT_GT(open.windows, 0);
  const WindowSearchResult grown = ImproveByWindows(
      g, 6, fitting, {.time_limit_s = 30, .window_columns = cap, .max_window_columns = largest});
  EXPECT_FALSE(grown.too_large);
  EXPECT_GT(grown.windows, 0);
}

class WindowSearchProperty : public ::testing::TestWithParam<uint32_t> {};

TEST_P(WindowSearchProperty, ReturnsACheaperOrEqualFittingSimulatedSchedule) {
  const Graph g = testing::RandomTrainingGraph(GetParam(), 4 + GetParam() % 5);
  int64_t budget = 0;
  const StrategyResult start = SomeFittingSchedule(g, &budget);
  const WindowSearchResult r =
      ImproveByWindows(g, budget, start, {.time_limit_s = 10, .window_columns = 300});
  ASSERT_EQ(r.best.status, FitStatus::kFits);
  EXPECT_LE(r.best.cost, start.cost);
  const SimulationResult sim = Simulate(g, r.best.schedule);
  EXPECT_DOUBLE_EQ(sim.cost, r.best.cost);
  EXPECT_EQ(sim.peak_bytes, r.best.peak_bytes);
  EXPECT_LE(sim.peak_bytes, budget);
  // Never below the true optimum.
  const OptimizerResult exact = SolveOptimal(g, budget, {.mip = {.time_limit_s = 30}});
  if (exact.status == SolveStatus::kOptimal) {
    EXPECT_GE(r.best.cost, exact.schedule->cost - 1e-9);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, WindowSearchProperty, ::testing::Range(1u, 11u));

// Issue 24, items 10 and 12: optimal starts from a schedule found earlier (another strategy's)
// when it beats the heuristic's, names it as its start, and never ends costlier; its progress
// says in words what the window search does ("14 windows tried, 3 improved the schedule").
TEST(OptimalStartTest, AnEarlierBetterScheduleIsTheStartAndProgressReadsAsSentences) {
  const Graph g = testing::RandomTrainingGraph(11, 30);  // too big for the whole MILP in 2 s
  const int64_t peak = CheckpointAll(g, std::numeric_limits<int64_t>::max()).peak_bytes;
  const int64_t budget = (MinimumPeakLowerBound(g) + peak) / 2;
  // The heuristic start is a fitting baseline costlier than BestHeuristic's schedule, which
  // plays the cheaper schedule another strategy of the command found.
  StrategyResult earlier = BestHeuristic(g, budget);
  ASSERT_EQ(earlier.status, FitStatus::kFits);
  earlier.strategy = "an-earlier-strategy";
  std::optional<StrategyResult> heuristic;
  for (const StrategySpec& spec : BaselineStrategies()) {
    if (!spec.applies(g)) continue;
    StrategyResult r = spec.run(g, budget);
    if (r.status == FitStatus::kFits && r.cost > earlier.cost) heuristic = std::move(r);
  }
  ASSERT_TRUE(heuristic) << "some baseline fits at a higher cost";
  std::vector<OptimalProgress> seen;
  const OptimizerResult r = SolveOptimal(
      g, budget,
      {.mip = {.time_limit_s = 2}, .heuristic = heuristic, .candidate_start = earlier,
       .progress = [&](const OptimalProgress& p) { seen.push_back(p); }});
  ASSERT_TRUE(r.schedule);
  EXPECT_LE(r.schedule->cost, earlier.cost);
  EXPECT_EQ(r.start.rfind("an-earlier-strategy (cost", 0), 0u) << r.start;
  ASSERT_FALSE(seen.empty());
  for (const OptimalProgress& p : seen) {
    EXPECT_EQ(p.detail.find(" windows, "), std::string::npos) << p.detail;
    EXPECT_EQ(p.detail.find("1 windows"), std::string::npos) << p.detail;
    if (p.phase == "window search" && p.detail != "starting") {
      EXPECT_NE(p.detail.find("tried"), std::string::npos) << p.detail;
    }
  }
  EXPECT_EQ(seen.front().phase, "window search");
}

}  // namespace
}  // namespace remat
