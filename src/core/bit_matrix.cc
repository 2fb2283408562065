// Dense bit matrix used for the R and S matrices of a schedule.
#include "core/bit_matrix.h"

#include <bit>

namespace remat {

BitMatrix::BitMatrix(int32_t rows, int32_t cols)
    : rows_(rows),
      cols_(cols),
      words_per_row_((static_cast<size_t>(cols) + 63) / 64),
      words_(static_cast<size_t>(rows) * words_per_row_, 0) {}

std::vector<int32_t> BitMatrix::RowOnes(int32_t row) const {
  std::vector<int32_t> ones;
  const size_t base = static_cast<size_t>(row) * words_per_row_;
  for (size_t w = 0; w < words_per_row_; ++w) {
    uint64_t word = words_[base + w];
    while (word != 0) {
      const int bit = std::countr_zero(word);
      ones.push_back(static_cast<int32_t>(w * 64 + bit));
      word &= word - 1;
    }
  }
  return ones;
}

int64_t BitMatrix::CountOnes() const {
  int64_t count = 0;
  for (uint64_t word : words_) count += std::popcount(word);
  return count;
}

}  // namespace remat
