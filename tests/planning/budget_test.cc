// Budget requests: sizes as people write them, device memory minus fixed memory, and messages
// that name the option the user gave.
#include "planning/budget.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "planning/size_parsing.h"

namespace remat {
namespace {

TEST(SizeParsingTest, UnitsAndPercentages) {
  EXPECT_EQ(ResolveSize(ParseSize("512MB"), 0), 512'000'000);
  EXPECT_EQ(ResolveSize(ParseSize("2KiB"), 0), 2048);
  // 60% of 1001 bytes is 600.6, rounded down.
  EXPECT_EQ(ResolveSize(ParseSize("60%"), 1001), 600);
  EXPECT_THROW(ParseSize("12 parsecs"), std::invalid_argument);
  EXPECT_THROW(ParseSize("-5"), std::invalid_argument);
}

TEST(BudgetTest, AnActivationBudgetIsTakenAsItIs) {
  // 50% of a 4000-byte no-remat peak.
  const Budget b = ResolveBudget({.budget_text = "50%"}, 4000);
  EXPECT_EQ(b.activation_bytes, 2000);
  EXPECT_FALSE(b.device_bytes);
  EXPECT_EQ(b.fixed_bytes, 0);
}

TEST(BudgetTest, DeviceMemoryLeavesWhatTheFixedMemoryDoesNot) {
  // 10000 bytes of device memory minus 2500 fixed leave 7500 for activations.
  const Budget b = ResolveBudget({.memory_text = "10000", .model_fixed_bytes = 2500}, 4000);
  EXPECT_EQ(b.activation_bytes, 7500);
  EXPECT_EQ(b.device_bytes, 10000);
  EXPECT_EQ(b.fixed_bytes, 2500);
  // A percentage of memory is of what a no-remat step needs: 50% of (4000 + 2500).
  EXPECT_EQ(ResolveBudget({.memory_text = "50%", .model_fixed_bytes = 2500}, 4000).activation_bytes,
            3250 - 2500);
  // A device preset gives the memory when no text does; a graph file's fixed memory is text.
  EXPECT_EQ(ResolveBudget({.device_memory_bytes = 9000, .fixed_text = "1000"}, 4000)
                .activation_bytes,
            8000);
}

TEST(BudgetTest, ConflictsAndMissingSizesAreUsageErrorsNamingTheOptions) {
  const BudgetOptionNames python{.budget = "budget=", .memory = "memory=",
                                 .fixed = "fixed_bytes=", .device = "memory="};
  try {
    ResolveBudget({.budget_text = "1", .memory_text = "2", .names = python}, 10);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "give either budget= or memory=, not both");
  }
  EXPECT_THROW(ResolveBudget({}, 10), UsageError);
  EXPECT_THROW(ResolveBudget({.budget_text = "lots"}, 10), UsageError);
  EXPECT_THROW(ResolveBudget({.memory_text = "100", .model_fixed_bytes = 5, .fixed_text = "5"}, 10),
               UsageError);
}

TEST(BudgetTest, ADeviceTheFixedMemoryFillsIsAnInfeasibleBudget) {
  // 1000 bytes of memory cannot hold 1000 bytes of weights and leave any activation budget.
  EXPECT_THROW(ResolveBudget({.memory_text = "1000", .model_fixed_bytes = 1000}, 10),
               InfeasibleBudgetError);
}

}  // namespace
}  // namespace remat
