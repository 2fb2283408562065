// A 0/1 matrix over stages x nodes, stored column by column as runs of consecutive stages.
// The R and S matrices of a schedule are nearly always a few runs per node (a value is held
// from its computation to its last use, recomputed a few times), so a schedule of n nodes takes
// O(n + runs) memory where a dense matrix would take n^2 bits: 1.25 GB at 100,000 nodes.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace remat {

// Rows first..last of one column, both included.
struct StageRun {
  int32_t first;
  int32_t last;
  bool operator==(const StageRun&) const = default;
};

class StageMatrix {
 public:
  StageMatrix() = default;
  StageMatrix(int32_t rows, int32_t cols);

  int32_t rows() const { return rows_; }
  int32_t cols() const { return cols_; }

  // The run of `col` that contains `row`, if `row` is set: O(log runs of the column).
  std::optional<StageRun> RunAt(int32_t row, int32_t col) const;
  bool Get(int32_t row, int32_t col) const { return RunAt(row, col).has_value(); }
  void Set(int32_t row, int32_t col, bool value = true) { SetRun(col, row, row, value); }
  // Sets (or clears) rows first..last of `col`; nothing when last < first.
  void SetRun(int32_t col, int32_t first, int32_t last, bool value = true);

  // Replaces the runs of `col`; `runs` must be sorted, disjoint and never adjacent (as Runs()
  // returns them).
  void SetColumn(int32_t col, std::vector<StageRun> runs) { columns_[col] = std::move(runs); }

  // The last row before `before` set in `col`, or -1: O(log runs).
  int32_t LastBefore(int32_t col, int32_t before) const;

  // The runs of `col`: sorted, disjoint and never adjacent (adjacent runs are merged).
  const std::vector<StageRun>& Runs(int32_t col) const { return columns_[col]; }

  // Columns set in `row`, in increasing order: O(cols x log runs), for small matrices.
  std::vector<int32_t> RowOnes(int32_t row) const;
  // Every row's set columns, in increasing order: O(rows + ones). Call it on R (a few ones
  // per stage), not on S of a large graph, whose ones can number n^2 / 4.
  std::vector<std::vector<int32_t>> Rows() const;
  // Number of set entries, O(runs).
  int64_t CountOnes() const;

  bool operator==(const StageMatrix& other) const = default;

 private:
  int32_t rows_ = 0;
  int32_t cols_ = 0;
  std::vector<std::vector<StageRun>> columns_;
};

}  // namespace remat
