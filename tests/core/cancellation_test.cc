// The calling thread's cancellation flag (src/core/cancellation.h).
#include "core/cancellation.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace remat {
namespace {

TEST(CancellationTest, NothingIsCancelledWithoutAScope) { EXPECT_FALSE(CancelRequested()); }

TEST(CancellationTest, ScopeReadsItsFlagAndRestoresThePreviousOne) {
  std::atomic<bool> outer{false}, inner{true};
  {
    const CancellationScope outer_scope(outer);
    EXPECT_FALSE(CancelRequested());
    outer = true;
    EXPECT_TRUE(CancelRequested());
    outer = false;
    {
      const CancellationScope inner_scope(inner);
      EXPECT_TRUE(CancelRequested());
    }
    EXPECT_FALSE(CancelRequested());  // the outer flag again
  }
  EXPECT_FALSE(CancelRequested());
}

TEST(CancellationTest, AnotherThreadDoesNotSeeTheFlag) {
  std::atomic<bool> flag{true};
  const CancellationScope scope(flag);
  bool seen = true;
  std::thread([&seen] { seen = CancelRequested(); }).join();
  EXPECT_FALSE(seen);
  EXPECT_TRUE(CancelRequested());
}

}  // namespace
}  // namespace remat
