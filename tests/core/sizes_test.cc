// Sizes for people: binary units, and two sizes side by side that never read alike unless they
// are equal (issue 24: "3.00 MiB is below the minimum peak 3.00 MiB").
#include "core/sizes.h"

#include <gtest/gtest.h>

namespace remat {
namespace {

TEST(FormatBytesTest, BinaryUnitsWithTwoDecimals) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(3 << 20), "3.00 MiB");
  EXPECT_EQ(FormatBytesWithDecimals(3 << 20, 4), "3.0000 MiB");
}

TEST(FormatBytesTest, SizesApartGetTheDigitsThatTellThemApart) {
  // 461 B below 3 MiB: 2.9996 MiB against 3.0000 MiB.
  const auto [budget, minimum] = FormatBytesApart((3 << 20) - 461, 3 << 20);
  EXPECT_NE(budget, minimum);
  EXPECT_EQ(budget, "2.9996 MiB");
  EXPECT_EQ(minimum, "3.0000 MiB");
  // One byte in a GiB still reads differently; equal sizes keep two decimals.
  const auto [a, b] = FormatBytesApart(int64_t{1} << 30, (int64_t{1} << 30) + 1);
  EXPECT_NE(a, b);
  const auto [c, d] = FormatBytesApart(3 << 20, 3 << 20);
  EXPECT_EQ(c, "3.00 MiB");
  EXPECT_EQ(d, "3.00 MiB");
  // Different units already differ at two decimals.
  const auto [e, f] = FormatBytesApart(1023, 1024);
  EXPECT_EQ(e, "1023 B");
  EXPECT_EQ(f, "1.00 KiB");
}

TEST(FormatBytesTest, DifferencesCarryTheirSign) {
  EXPECT_EQ(FormatBytesDifference(2048), "+2.00 KiB");
  EXPECT_EQ(FormatBytesDifference(-512), "-512 B");
  EXPECT_EQ(FormatBytesDifference(0), "+0 B");
}

}  // namespace
}  // namespace remat
