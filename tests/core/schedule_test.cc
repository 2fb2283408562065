#include "core/schedule.h"

#include <gtest/gtest.h>

#include <random>

#include "core/training_graph.h"
#include "testing/random_graphs.h"

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

// docs/design.md §3's rules read cell by cell, stage by stage: the oracle for the run-based check.
bool ValidByDefinition(const Graph& g, const Schedule& s) {
  const int32_t n = g.size();
  for (int32_t t = 0; t < n; ++t) {
    if (!s.R.Get(t, t)) return false;
    for (int32_t i = 0; i < n; ++i) {
      if (s.R.Get(t, i) && i > t) return false;
      if (s.S.Get(t, i) && i >= t) return false;
      if (t + 1 < n && s.S.Get(t + 1, i) && !s.S.Get(t, i) && !s.R.Get(t, i)) return false;
      if (!s.R.Get(t, i)) continue;
      for (int32_t u : g.preds(i)) {
        if (!s.R.Get(t, u) && !s.S.Get(t, u)) return false;
      }
    }
  }
  return true;
}

TEST(CheckScheduleTest, AgreesWithTheDefinitionOnRandomMatrices) {
  std::mt19937 rng(11);
  int valid = 0;
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    const Graph g = testing::RandomUnlabeledDag(seed, 2 + seed % 5, 0.5);
    const int32_t n = g.size();
    // Mostly-valid matrices: the lower triangle random, the diagonal of R nearly always set,
    // so that both verdicts occur often.
    Schedule s = EmptySchedule(g);
    for (int32_t t = 0; t < n; ++t) {
      for (int32_t i = 0; i < n; ++i) {
        const uint32_t roll = rng() % 16;
        if (i == t) s.R.Set(t, i, roll != 0);
        if (i < t && roll < 7) s.R.Set(t, i);
        if (i < t && roll >= 5 && roll < 12) s.S.Set(t, i);
        if (i > t && roll == 15) s.R.Set(t, i);
        if (i >= t && roll == 14) s.S.Set(t, i);
      }
    }
    const bool expected = ValidByDefinition(g, s);
    valid += expected;
    EXPECT_EQ(CheckSchedule(g, s).empty(), expected) << "seed " << seed;
  }
  EXPECT_GT(valid, 20);
  EXPECT_LT(valid, 380);
}

}  // namespace
}  // namespace remat
