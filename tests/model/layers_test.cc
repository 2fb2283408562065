// Tests of src/model/layers.cc: element counts and their overflow, shape names.
#include "model/layers.h"

#include <gtest/gtest.h>

#include "core/errors.h"

namespace remat {
namespace {

TEST(NumElementsTest, MultipliesAndRejectsOverflow) {
  EXPECT_EQ(NumElements({256, 224, 224, 3}), 38535168);  // 256 * 150528
  EXPECT_EQ(FormatShape({2, 7, 7, 512}), "2x7x7x512");
  // 2^31 * 2^31 elements would need 2^64 bytes.
  EXPECT_THROW(NumElements({int64_t{1} << 31, int64_t{1} << 31}), InputError);
}

}  // namespace
}  // namespace remat
