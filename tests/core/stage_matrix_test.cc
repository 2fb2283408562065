#include "core/stage_matrix.h"

#include <random>

#include <gtest/gtest.h>

namespace remat {
namespace {

TEST(StageMatrixTest, RunsMergeWhenTheyTouchAndSplitWhenCleared) {
  StageMatrix m(10, 2);
  m.SetRun(1, 2, 4);
  m.SetRun(1, 6, 7);
  EXPECT_EQ(m.Runs(1), (std::vector<StageRun>{{2, 4}, {6, 7}}));
  m.Set(5, 1);  // fills the hole: one run
  EXPECT_EQ(m.Runs(1), (std::vector<StageRun>{{2, 7}}));
  m.SetRun(1, 4, 5, false);
  EXPECT_EQ(m.Runs(1), (std::vector<StageRun>{{2, 3}, {6, 7}}));
  EXPECT_TRUE(m.Get(3, 1));
  EXPECT_FALSE(m.Get(4, 1));
  EXPECT_FALSE(m.Get(3, 0));
  EXPECT_EQ(m.CountOnes(), 4);
  EXPECT_EQ(m.RowOnes(6), (std::vector<int32_t>{1}));
  m.SetRun(1, 0, 9, false);
  EXPECT_TRUE(m.Runs(1).empty());
}

// Random sets and clears against a dense oracle: every Get, every row, the run invariants.
TEST(StageMatrixTest, AgreesWithADenseMatrixUnderRandomEdits) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const int32_t rows = 1 + static_cast<int32_t>(rng() % 20);
    const int32_t cols = 1 + static_cast<int32_t>(rng() % 6);
    StageMatrix m(rows, cols);
    std::vector<std::vector<bool>> dense(rows, std::vector<bool>(cols, false));
    for (int edit = 0; edit < 60; ++edit) {
      const int32_t col = static_cast<int32_t>(rng() % cols);
      const int32_t a = static_cast<int32_t>(rng() % rows);
      const int32_t b = static_cast<int32_t>(rng() % rows);
      const bool value = rng() % 3 != 0;
      m.SetRun(col, std::min(a, b), std::max(a, b), value);
      for (int32_t r = std::min(a, b); r <= std::max(a, b); ++r) dense[r][col] = value;
    }
    int64_t ones = 0;
    std::vector<std::vector<int32_t>> expected_rows(rows);
    for (int32_t r = 0; r < rows; ++r) {
      for (int32_t c = 0; c < cols; ++c) {
        ASSERT_EQ(m.Get(r, c), dense[r][c]) << "trial " << trial << " at " << r << "," << c;
        // RunAt: the maximal block of set rows around (r, c), from the oracle.
        if (const std::optional<StageRun> run = m.RunAt(r, c)) {
          int32_t first = r, last = r;
          while (first > 0 && dense[first - 1][c]) --first;
          while (last + 1 < rows && dense[last + 1][c]) ++last;
          EXPECT_EQ(*run, (StageRun{first, last})) << "trial " << trial << " at " << r << "," << c;
        }
        if (dense[r][c]) {
          ++ones;
          expected_rows[r].push_back(c);
        }
      }
      EXPECT_EQ(m.RowOnes(r), expected_rows[r]);
    }
    EXPECT_EQ(m.Rows(), expected_rows);
    EXPECT_EQ(m.CountOnes(), ones);
    for (int32_t c = 0; c < cols; ++c) {
      const std::vector<StageRun>& runs = m.Runs(c);
      for (size_t k = 0; k < runs.size(); ++k) {
        EXPECT_LE(runs[k].first, runs[k].last);
        if (k > 0) {
          EXPECT_GT(runs[k].first, runs[k - 1].last + 1) << "runs not merged";
        }
      }
    }
  }
}

}  // namespace
}  // namespace remat
