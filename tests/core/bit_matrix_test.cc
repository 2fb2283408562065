#include "core/bit_matrix.h"

#include <gtest/gtest.h>

namespace remat {
namespace {

TEST(BitMatrixTest, SetGetAcrossWordBoundaries) {
  BitMatrix m(3, 130);  // three 64-bit words per row
  m.Set(0, 0);
  m.Set(1, 63);
  m.Set(1, 64);
  m.Set(2, 129);
  EXPECT_TRUE(m.Get(1, 63));
  EXPECT_TRUE(m.Get(1, 64));
  EXPECT_FALSE(m.Get(1, 65));
  EXPECT_FALSE(m.Get(0, 129));
  EXPECT_EQ(m.RowOnes(1), (std::vector<int32_t>{63, 64}));
  EXPECT_EQ(m.RowOnes(2), (std::vector<int32_t>{129}));
  EXPECT_EQ(m.CountOnes(), 4);
  m.Set(1, 63, false);
  EXPECT_EQ(m.RowOnes(1), (std::vector<int32_t>{64}));
}

}  // namespace
}  // namespace remat
