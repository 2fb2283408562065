// The calling thread's cancellation flag (src/core/cancellation.h).
#include "core/cancellation.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
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

// Only a stoppable scope abandons work at its deadline: a command's scope (not stoppable)
// lowers the deadline that a strategy's scope inside it keeps, but never throws itself.
TEST(DeadlineScopeTest, OnlyAStoppableScopeThrowsAtItsDeadline) {
  EXPECT_NO_THROW(StopAtDeadline());  // no scope: nothing to keep
  {
    const DeadlineScope command(0, /*stoppable=*/false);
    EXPECT_TRUE(DeadlinePassed());
    EXPECT_NO_THROW(StopAtDeadline());
    {
      const DeadlineScope strategy(3600);  // stoppable, and the command's deadline holds
      EXPECT_THROW(StopAtDeadline(), TimeLimitReached);
    }
    EXPECT_NO_THROW(StopAtDeadline());  // the command's scope again
  }
  const DeadlineScope later(3600);
  EXPECT_NO_THROW(StopAtDeadline());
}

// A cancelled call is past every deadline: its work is abandoned as at a time limit.
TEST(DeadlineScopeTest, ACancelledCallStopsAsAtItsDeadline) {
  std::atomic<bool> flag{false};
  const CancellationScope scope(flag);
  const DeadlineScope strategy(3600);
  EXPECT_NO_THROW(StopAtDeadline());
  flag = true;
  EXPECT_EQ(SecondsLeft(), 0.0);
  EXPECT_THROW(StopAtDeadline(), TimeLimitReached);
}

// SecondsLeft counts down to the innermost deadline: infinity without one, never below zero.
TEST(DeadlineScopeTest, SecondsLeftCountsDownToTheInnermostDeadline) {
  EXPECT_TRUE(std::isinf(SecondsLeft()));
  const DeadlineScope hour(3600);
  EXPECT_GT(SecondsLeft(), 3500);
  EXPECT_LE(SecondsLeft(), 3600);
  const DeadlineScope spent(0);
  EXPECT_EQ(SecondsLeft(), 0.0);
}

// DeadlineCheck reads the clock once per stride of steps: within a stride nothing is thrown,
// at its end the passed deadline is.
TEST(DeadlineScopeTest, DeadlineCheckThrowsAtTheEndOfAStride) {
  const DeadlineScope spent(0);
  DeadlineCheck check;
  for (int i = 0; i < 4095; ++i) check.Step();
  EXPECT_THROW(check.Step(), TimeLimitReached);
  DeadlineCheck big;
  EXPECT_THROW(big.Step(1 << 20), TimeLimitReached);  // one large step counts as many
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
