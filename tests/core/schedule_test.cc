#include "core/schedule.h"

#include <gtest/gtest.h>

#include "core/training_graph.h"

namespace remat {
namespace {

bool Mentions(const std::vector<std::string>& problems, const std::string& text) {
  for (const std::string& p : problems) {
    if (p.find(text) != std::string::npos) return true;
  }
  return false;
}

// 0 -> 1 -> 2, unlabeled.
Graph Chain3() { return Graph({{.name = "a"}, {.name = "b"}, {.name = "c"}}, {{0, 1}, {1, 2}}); }

TEST(CheckScheduleTest, AcceptsTheNoRecomputationSchedule) {
  const Graph g = Chain3();
  Schedule s = EmptySchedule(g);
  for (int t = 0; t < 3; ++t) s.R.Set(t, t);
  s.S.Set(1, 0);
  s.S.Set(2, 1);
  EXPECT_TRUE(CheckSchedule(g, s).empty());
}

TEST(CheckScheduleTest, NamesFrontierViolations) {
  const Graph g = Chain3();
  Schedule s = EmptySchedule(g);
  s.R.Set(0, 0);
  s.R.Set(0, 1);  // ahead of the frontier
  s.R.Set(1, 1);
  s.S.Set(1, 1);  // held before it exists
  const auto problems = CheckSchedule(g, s);
  EXPECT_TRUE(Mentions(problems, "stage 0: node 1 ('b') is computed ahead of the frontier"));
  EXPECT_TRUE(Mentions(problems, "stage 1: node 1 ('b') is held before it exists"));
  EXPECT_TRUE(Mentions(problems, "stage 2: node 2 ('c') is not computed (frontier)"));
}

TEST(CheckScheduleTest, NamesMissingInputsAndCheckpoints) {
  const Graph g = Chain3();
  Schedule s = EmptySchedule(g);
  for (int t = 0; t < 3; ++t) s.R.Set(t, t);
  s.S.Set(2, 0);  // 0 was not held in stage 1 nor computed there
  const auto problems = CheckSchedule(g, s);
  EXPECT_TRUE(Mentions(problems, "stage 1: node 1 ('b') reads node 0 ('a'), which is neither"));
  EXPECT_TRUE(Mentions(problems, "stage 2: node 0 ('a') is held but was neither held nor computed "
                                 "in stage 1"));
}

}  // namespace
}  // namespace remat
