// Run-length columns for the R and S matrices of a schedule.
#include "core/stage_matrix.h"

#include <algorithm>

namespace remat {

StageMatrix::StageMatrix(int32_t rows, int32_t cols)
    : rows_(rows), cols_(cols), columns_(static_cast<size_t>(cols)) {}

std::optional<StageRun> StageMatrix::RunAt(int32_t row, int32_t col) const {
  const std::vector<StageRun>& runs = columns_[col];
  // The first run that ends at or after `row`.
  const auto it = std::lower_bound(runs.begin(), runs.end(), row,
                                   [](const StageRun& run, int32_t r) { return run.last < r; });
  if (it == runs.end() || it->first > row) return std::nullopt;
  return *it;
}

int32_t StageMatrix::LastBefore(int32_t col, int32_t before) const {
  const std::vector<StageRun>& runs = columns_[col];
  // The first run that starts at or after `before`; the one ahead of it is the answer.
  const auto it = std::lower_bound(runs.begin(), runs.end(), before,
                                   [](const StageRun& run, int32_t r) { return run.first < r; });
  if (it == runs.begin()) return -1;
  return std::min(std::prev(it)->last, before - 1);
}

void StageMatrix::SetRun(int32_t col, int32_t first, int32_t last, bool value) {
  if (last < first) return;
  std::vector<StageRun>& runs = columns_[col];
  if (value) {
    // Runs that overlap or touch [first, last] merge with it into one run.
    auto begin = std::lower_bound(runs.begin(), runs.end(), first,
                                  [](const StageRun& run, int32_t r) { return run.last + 1 < r; });
    auto end = begin;
    StageRun merged{first, last};
    while (end != runs.end() && end->first <= last + 1) {
      merged.first = std::min(merged.first, end->first);
      merged.last = std::max(merged.last, end->last);
      ++end;
    }
    if (begin == end) {
      runs.insert(begin, merged);
    } else {
      *begin = merged;
      runs.erase(begin + 1, end);
    }
    return;
  }
  // Clearing: runs that overlap [first, last] keep only their parts outside it.
  auto begin = std::lower_bound(runs.begin(), runs.end(), first,
                                [](const StageRun& run, int32_t r) { return run.last < r; });
  auto end = begin;
  std::vector<StageRun> kept;
  while (end != runs.end() && end->first <= last) {
    if (end->first < first) kept.push_back({end->first, first - 1});
    if (end->last > last) kept.push_back({last + 1, end->last});
    ++end;
  }
  const auto at = runs.erase(begin, end);
  runs.insert(at, kept.begin(), kept.end());
}

std::vector<int32_t> StageMatrix::RowOnes(int32_t row) const {
  std::vector<int32_t> ones;
  for (int32_t col = 0; col < cols_; ++col) {
    if (Get(row, col)) ones.push_back(col);
  }
  return ones;
}

std::vector<std::vector<int32_t>> StageMatrix::Rows() const {
  std::vector<std::vector<int32_t>> rows(static_cast<size_t>(rows_));
  for (int32_t col = 0; col < cols_; ++col) {
    for (const StageRun& run : columns_[col]) {
      for (int32_t row = run.first; row <= run.last; ++row) rows[row].push_back(col);
    }
  }
  return rows;
}

int64_t StageMatrix::CountOnes() const {
  int64_t count = 0;
  for (const std::vector<StageRun>& runs : columns_) {
    for (const StageRun& run : runs) count += run.last - run.first + 1;
  }
  return count;
}

}  // namespace remat
