// A dense 0/1 matrix stored as 64-bit words, one row per stage: T x n bits, so a
// 10,000-stage schedule of 10,000 nodes takes 12.5 MB per matrix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace remat {

class BitMatrix {
 public:
  BitMatrix() = default;
  BitMatrix(int32_t rows, int32_t cols);

  int32_t rows() const { return rows_; }
  int32_t cols() const { return cols_; }

  bool Get(int32_t row, int32_t col) const {
    return (words_[Index(row, col)] >> (col & 63)) & 1U;
  }
  void Set(int32_t row, int32_t col, bool value = true) {
    uint64_t& word = words_[Index(row, col)];
    const uint64_t mask = uint64_t{1} << (col & 63);
    word = value ? (word | mask) : (word & ~mask);
  }

  // Columns set in `row`, in increasing order.
  std::vector<int32_t> RowOnes(int32_t row) const;
  // Number of set bits in the whole matrix.
  int64_t CountOnes() const;

  bool operator==(const BitMatrix& other) const = default;

 private:
  size_t Index(int32_t row, int32_t col) const {
    return static_cast<size_t>(row) * words_per_row_ + static_cast<size_t>(col >> 6);
  }

  int32_t rows_ = 0;
  int32_t cols_ = 0;
  size_t words_per_row_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace remat
