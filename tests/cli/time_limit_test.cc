// --time-limit on a graph where every step of a strategy is slow: the paper's linear(100000)
// chain (200,001 nodes), where evict's candidates were once built in time quadratic in the
// nodes and each of its passes overran its share of the limit several times over.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/run_remat.h"
#include "testing/sanitizer.h"

namespace remat::testing {
namespace {

TEST(TimeLimitLongTest, EvictOnALongChainReturnsItsScheduleAtTheLimit) {
  const auto dir = TempDir("time_limit");
  const std::string chain = (dir / "chain.json").string();
  ASSERT_EQ(RunRemat("graph linear 100000 -o " + chain).exit_code, 0);
  // The limit holds for the whole command, loading the chain and simulating its no-remat
  // schedule included: that part's time (as `graph info` takes it, about a second, far more
  // under ASan or a loaded machine), twice more for evict's start and its final evaluation
  // (each simulates the chain once), plus 2 s for its passes.
  const auto begin = std::chrono::steady_clock::now();
  ASSERT_EQ(RunRemat("graph info " + chain).exit_code, 0);
  const double loading_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  const double limit_s = std::ceil(3 * loading_s) + 2;
  const RunResult run = RunRemat("solve --graph " + chain + " --strategy evict --budget 50% " +
                                 fmt::format("--time-limit {} ", limit_s) +
                                 "--no-lower-bound --json");
  std::filesystem::remove_all(dir);
  // 2 s evict a few values of the 50,000 that 50% needs: a schedule over the budget (exit 1).
  ASSERT_EQ(run.exit_code, 1) << run.err;
  const nlohmann::json row = nlohmann::json::parse(run.out)["results"][0];
  EXPECT_EQ(row["status"], "over_budget");
  EXPECT_GT(row["peak_bytes"].get<int64_t>(), 0);
  // The note says the limit stopped it, not that nothing more could be evicted.
  EXPECT_NE(row["parameters"].get<std::string>().find("(time limit)"), std::string::npos)
      << row["parameters"];
  // Generous, for a loaded machine: at most the limit plus its last evaluation (before: each
  // of the four passes spent about 2 s on candidates whatever its share). Under ASan one
  // simulation of the chain alone takes seconds, so only a normal build can keep the time.
  if (!kSanitized) {
    EXPECT_LT(row["solve_time_s"].get<double>(), limit_s + 1.0);
  }
}

// The whole command keeps its limit, loading included, when a strategy runs baselines that
// each build and simulate schedules of the whole chain (local-search's portfolio: Griewank's
// slot sweep alone took 6.8 s on this chain, and the command 17 s at --time-limit 1). The
// promise (docs/cli.md): one strategy and the bound, 2 x 1 s, and a fraction of a second to
// print; here within 1.25x plus 2 s, the benchmark's bound for a loaded machine.
TEST(TimeLimitTest, APortfolioOfBaselinesKeepsTheCommandsLimitOnALongChain) {
  if (kSanitized) GTEST_SKIP() << "one simulation of the chain takes seconds under ASan";
  const auto dir = TempDir("time_limit_portfolio");
  const std::string chain = (dir / "chain.json").string();
  ASSERT_EQ(RunRemat("graph linear 50000 -o " + chain).exit_code, 0);
  for (const std::string strategy : {"local-search", "griewank", "optimal"}) {
    const auto begin = std::chrono::steady_clock::now();
    const RunResult run = RunRemat("solve --graph " + chain + " --strategy " + strategy +
                                   " --budget 67 --time-limit 1 --json --quiet");
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << strategy << run.err;
    EXPECT_LT(wall_s, 1.25 * 2 + 2) << strategy;
    const nlohmann::json row = nlohmann::json::parse(run.out)["results"][0];
    EXPECT_LE(row["solve_time_s"].get<double>(), 1.25 * 1 + 1) << strategy << row.dump();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace remat::testing
