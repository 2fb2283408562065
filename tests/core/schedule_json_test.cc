#include "core/schedule_json.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/graph_json.h"
#include "core/recompute.h"
#include "core/simulator.h"
#include "core/training_graph.h"

namespace remat {
namespace {

TEST(ScheduleJsonTest, RoundTripsMatricesAndFigures) {
  const Graph g = LinearGraph(5);
  StageMatrix S(g.size(), g.size());
  for (int t = 2; t < 9; ++t) S.Set(t, 1);  // one long run
  S.Set(4, 3);
  S.Set(7, 3);  // two runs of node 3
  const Schedule schedule = ScheduleFromCheckpoints(g, S);
  const SimulationResult sim = Simulate(g, schedule);
  const std::string text = ScheduleToJson(
      g, schedule, {.strategy = "test", .cost = sim.cost, .peak_bytes = sim.peak_bytes,
                    .budget_bytes = 7});
  const ScheduleDocument doc = ScheduleFromJson(text, "s.json");
  EXPECT_EQ(doc.schedule, schedule);
  EXPECT_EQ(doc.info.strategy, "test");
  EXPECT_EQ(doc.info.cost, sim.cost);
  EXPECT_EQ(doc.info.peak_bytes, sim.peak_bytes);
  EXPECT_EQ(doc.info.budget_bytes, 7);
  EXPECT_EQ(GraphFingerprint(doc.graph), GraphFingerprint(g));
  // Node 3 is held in stages 4 and 7: two one-stage intervals.
  EXPECT_NE(text.find("[[4,4],[7,7]]"), std::string::npos);
}

// Issue 14, defect 11: the solver's verdict and the bound travel with the schedule, so a
// time-limited MILP answer is never shown as "optimal"; files without them still load.
TEST(ScheduleJsonTest, RecordsSolverStatusAndBound) {
  const Graph g = LinearGraph(3);
  const Schedule schedule = ScheduleFromCheckpoints(g, StageMatrix(g.size(), g.size()));
  const double cost = Simulate(g, schedule).cost;
  const double bound = cost - 0.5;
  const std::string text = ScheduleToJson(
      g, schedule, {.strategy = "optimal", .solver_status = "feasible", .lower_bound_cost = bound});
  const ScheduleDocument doc = ScheduleFromJson(text, "s.json");
  EXPECT_EQ(doc.info.solver_status, "feasible");
  ASSERT_TRUE(doc.info.lower_bound_cost.has_value());
  EXPECT_DOUBLE_EQ(*doc.info.lower_bound_cost, bound);
  const ScheduleDocument plain = ScheduleFromJson(ScheduleToJson(g, schedule, {.strategy = "x"}), "p.json");
  EXPECT_TRUE(plain.info.solver_status.empty());
  EXPECT_FALSE(plain.info.lower_bound_cost.has_value());
  const std::string negative = ScheduleToJson(
      g, schedule, {.strategy = "optimal", .solver_status = "feasible", .lower_bound_cost = -1});
  EXPECT_THROW(ScheduleFromJson(negative, "n.json"), InputError);
}

// Issue 34, item 2: a file's proof fields are bad input when no valid proof could say them: a
// bound above the schedule's own (re-simulated) cost, or a status remat never writes.
TEST(ScheduleJsonTest, RejectsABoundAboveTheCostAndUnknownStatuses) {
  const Graph g = LinearGraph(3);
  const Schedule schedule = ScheduleFromCheckpoints(g, StageMatrix(g.size(), g.size()));
  const double cost = Simulate(g, schedule).cost;
  ScheduleFromJson(ScheduleToJson(g, schedule, {.strategy = "x", .lower_bound_cost = cost}),
                   "tight.json");  // a bound may meet the cost
  const std::string above =
      ScheduleToJson(g, schedule, {.strategy = "x", .lower_bound_cost = cost * 1000});
  try {
    ScheduleFromJson(above, "above.json");
    FAIL() << "a bound above the cost loaded";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("above.json: lower_bound_cost:"), std::string::npos)
        << e.what();
  }
  for (const std::string status : {"optimal", "within_gap", "feasible"}) {
    ScheduleFromJson(ScheduleToJson(g, schedule, {.strategy = "x", .solver_status = status}),
                     "ok.json");
  }
  const std::string god = ScheduleToJson(
      g, schedule, {.strategy = "x", .solver_status = "proven optimal by god\x1b[2J"});
  try {
    ScheduleFromJson(god, "god.json");
    FAIL() << "an unknown status loaded";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("god.json: solver_status: unknown status"), std::string::npos) << what;
    EXPECT_EQ(what.find('\x1b'), std::string::npos) << "control characters reach the terminal";
    EXPECT_NE(what.find("\\u001b"), std::string::npos) << what;
  }
}

TEST(ScheduleJsonTest, RejectsATamperedGraph) {
  const Graph g = LinearGraph(3);
  const Schedule schedule = ScheduleFromCheckpoints(g, StageMatrix(g.size(), g.size()));
  std::string text = ScheduleToJson(g, schedule, {.strategy = "x"});
  const size_t at = text.find("\"bytes\":1");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 9, "\"bytes\":2");
  EXPECT_THROW(ScheduleFromJson(text, "s.json"), InputError);
}

TEST(ScheduleJsonTest, RejectsHandEditedMatricesNamingTheFile) {
  // Every value is held from the stage after it is computed, so R is the identity: each
  // stage computes only its own node and reads held inputs. An S edited to hold nothing leaves
  // stage 1 reading node 0, which is neither held nor recomputed: docs/design.md §3 forbids it.
  const Graph g = LinearGraph(2);
  StageMatrix S(g.size(), g.size());
  for (int32_t t = 1; t < g.size(); ++t) {
    for (int32_t i = 0; i < t; ++i) S.Set(t, i);
  }
  const Schedule schedule = ScheduleFromCheckpoints(g, S);
  const std::string text = ScheduleToJson(g, schedule, {.strategy = "x"});
  EXPECT_NO_THROW(ScheduleFromJson(text, "s.json"));
  std::string edited = text;
  const size_t at = edited.find("\"S\":[");
  ASSERT_NE(at, std::string::npos);
  const size_t end = edited.find("],\"budget_bytes\"", at);
  ASSERT_NE(end, std::string::npos);
  std::string empty_rows = "\"S\":[";
  for (int32_t i = 0; i < g.size(); ++i) empty_rows += i == 0 ? "[]" : ",[]";
  edited.replace(at, end - at, empty_rows);
  try {
    ScheduleFromJson(edited, "s.json");
    ADD_FAILURE() << "an S that holds nothing was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.json"), std::string::npos) << e.what();
    // The message says what is wrong: the field, then the first violation, stage and nodes.
    EXPECT_NE(std::string(e.what()).find("s.json: R/S: the schedule is not valid: stage 1: node 1 "
                                         "('v1') reads node 0 ('v0'), which is neither computed "
                                         "nor held"),
              std::string::npos)
        << e.what();
  }
}

TEST(ScheduleJsonTest, RejectsANegativeBudget) {
  const Graph g = LinearGraph(2);
  const Schedule schedule = ScheduleFromCheckpoints(g, StageMatrix(g.size(), g.size()));
  const std::string text = ScheduleToJson(g, schedule, {.strategy = "x", .budget_bytes = -5});
  EXPECT_THROW(ScheduleFromJson(text, "s.json"), InputError);
}

// Issue 24, item 5: a file whose schedule peaks over its recorded budget is refused by name;
// one within it, or without a budget, passes.
TEST(ScheduleJsonTest, CheckWithinBudgetResimulatesAgainstTheRecordedBudget) {
  const Graph g = LinearGraph(5);
  const Schedule schedule = ScheduleFromCheckpoints(g, StageMatrix(g.size(), g.size()));
  const int64_t peak = Simulate(g, schedule).peak_bytes;
  auto document = [&](std::optional<int64_t> budget) {
    return ScheduleFromJson(ScheduleToJson(g, schedule, {.strategy = "x", .peak_bytes = 0,
                                                         .budget_bytes = budget}),
                            "s.json");
  };
  EXPECT_NO_THROW(CheckScheduleWithinBudget(document(peak), "s.json", "--allow"));
  EXPECT_NO_THROW(CheckScheduleWithinBudget(document(std::nullopt), "s.json", "--allow"));
  try {
    CheckScheduleWithinBudget(document(peak - 1), "s.json", "--allow");
    ADD_FAILURE() << "over budget by 1 B passed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.json: the schedule peaks at"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("--allow"), std::string::npos);
  }
}

}  // namespace
}  // namespace remat
