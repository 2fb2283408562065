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
  BitMatrix S(g.size(), g.size());
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

TEST(ScheduleJsonTest, RejectsATamperedGraph) {
  const Graph g = LinearGraph(3);
  const Schedule schedule = ScheduleFromCheckpoints(g, BitMatrix(g.size(), g.size()));
  std::string text = ScheduleToJson(g, schedule, {.strategy = "x"});
  const size_t at = text.find("\"bytes\":1");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 9, "\"bytes\":2");
  EXPECT_THROW(ScheduleFromJson(text, "s.json"), InputError);
}

}  // namespace
}  // namespace remat
