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
// A deadline holds while its scope lives; nested scopes keep the earlier one; a limit beyond
// the clock's range is no limit.
TEST(DeadlineScopeTest, NestsKeepingTheEarlierDeadline) {
  EXPECT_FALSE(DeadlinePassed());
  {
    const DeadlineScope spent(0);
    EXPECT_TRUE(DeadlinePassed());
    {
      const DeadlineScope later(3600);
      EXPECT_TRUE(DeadlinePassed());  // the outer, earlier deadline still holds
    }
  }
  EXPECT_FALSE(DeadlinePassed());
  const DeadlineScope forever(1e300);
  EXPECT_FALSE(DeadlinePassed());
}

}  // namespace remat
