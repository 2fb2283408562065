// `remat-run train` end to end: the JSON report's fields and their relations, and the exit
// codes of bad command lines and impossible budgets.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "../cli/run_remat.h"

namespace remat::exec {
namespace {

using nlohmann::json;
using remat::testing::RunBinary;
using remat::testing::RunResult;

RunResult RunTrain(const std::string& args) {
  return RunBinary(REMAT_RUN_BINARY, "train --model vgg16 --batch 2 --resolution 32x32 " + args);
}

TEST(RunTrainCliTest, JsonReportsLossesPeaksOverheadsAndTheGradientCheck) {
  const RunResult run =
      RunTrain("--budget 100% --strategy chen-sqrtn --steps 2 --check-gradients --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["schema"], "remat.run-train/1");
  EXPECT_EQ(doc["strategy"], "chen-sqrtn-linear");
  EXPECT_EQ(doc["gradients_match"], true);
  EXPECT_EQ(doc["gradients_checked"], true);
  ASSERT_EQ(doc["losses"].size(), 2u);
  ASSERT_EQ(doc["steps"].size(), 2u);
  EXPECT_EQ(doc["steps"][1]["loss"], doc["losses"][1]);
  EXPECT_LT(doc["losses"][1].get<double>(), doc["losses"][0].get<double>());
  EXPECT_LE(doc["max_abs_gradient_diff"].get<double>(), 1e-6);
  // The predicted overhead is the simulated cost ratio; Chen's plan recomputes, so it is > 1.
  EXPECT_DOUBLE_EQ(doc["predicted_overhead"].get<double>(),
                   doc["cost"].get<double>() / doc["no_remat_cost"].get<double>());
  EXPECT_GT(doc["predicted_overhead"].get<double>(), 1.0);
  EXPECT_GT(doc["recomputations"].get<int64_t>(), 0);
  EXPECT_GT(doc["measured_overhead"].get<double>(), 0.0);
  const auto predicted = doc["predicted_peak_bytes"].get<int64_t>();
  const auto tensors = doc["predicted_tensor_peak_bytes"].get<int64_t>();
  EXPECT_EQ(doc["tensor_peak_bytes"].get<int64_t>(), tensors);
  EXPECT_LE(tensors, predicted);
  EXPECT_GE(doc["measured_peak_bytes"].get<int64_t>(), tensors);
  EXPECT_LE(predicted, doc["budget_bytes"].get<int64_t>());
  EXPECT_LT(predicted, doc["no_remat_predicted_peak_bytes"].get<int64_t>());
}

TEST(RunTrainCliTest, WithoutTheCheckGradientsAreNotClaimed) {
  const RunResult run = RunTrain("--budget 100% --strategy checkpoint-all --steps 1 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["gradients_checked"], false);
  EXPECT_TRUE(doc["gradients_match"].is_null());
  EXPECT_EQ(doc["predicted_overhead"], 1.0);
}

TEST(RunTrainCliTest, TableNamesEveryStepAndBothPeaks) {
  const RunResult run = RunTrain("--memory 1GiB --strategy griewank --steps 2 --check-gradients");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("activation peak: predicted"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("overhead: predicted"), std::string::npos);
  EXPECT_NE(run.out.find("gradients vs autograd: match in every step"), std::string::npos);
  EXPECT_NE(run.out.find("\n    2  "), std::string::npos) << "a row for step 2: " << run.out;
}

TEST(RunTrainCliTest, TrainsTheTransformerWithItsOwnSizeOptions) {
  const std::string model =
      "train --model transformer --batch 2 --seq-length 8 --layers 1 --hidden 16 --heads 2 "
      "--vocab 32 ";
  RunResult run = RunBinary(REMAT_RUN_BINARY, model + "--budget 80% --strategy chen-sqrtn "
                                                      "--steps 2 --check-gradients --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["gradients_match"], true);
  EXPECT_EQ(doc["max_abs_gradient_diff"], 0.0);
  EXPECT_EQ(doc["tensor_peak_bytes"], doc["predicted_tensor_peak_bytes"]);
  EXPECT_LT(doc["losses"][1].get<double>(), doc["losses"][0].get<double>());
  // Image options are refused for the transformer, and transformer options for image models.
  run = RunBinary(REMAT_RUN_BINARY, model + "--resolution 32x32 --budget 80% --strategy "
                                            "checkpoint-all --steps 1");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  run = RunTrain("--hidden 16 --budget 80% --strategy checkpoint-all --steps 1");
  EXPECT_EQ(run.exit_code, 2) << run.err;
}

TEST(RunTrainCliTest, BadCommandLinesAndImpossibleBudgetsHaveTheirExitCodes) {
  RunResult run = RunTrain("--strategy checkpoint-all --steps 1");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--memory SIZE or --budget SIZE"), std::string::npos) << run.err;
  run = RunTrain("--budget 1KiB --memory 1GiB --strategy checkpoint-all --steps 1");
  EXPECT_EQ(run.exit_code, 2) << "--memory and --budget exclude each other";
  run = RunTrain("--budget lots --strategy checkpoint-all --steps 1");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  run = RunTrain("--budget 1KiB --strategy no-such-strategy --steps 1");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  run = RunTrain("--budget 100% --strategy checkpoint-all --steps 0");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  // 1 KiB holds no node of VGG16: no schedule, exit 1, nothing on stdout.
  run = RunTrain("--budget 1KiB --strategy optimal --steps 1 --json");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_NE(run.err.find("found no schedule"), std::string::npos) << run.err;
  // The weights alone (VGG16 has 138M parameters) exceed 1 MiB of device memory.
  run = RunTrain("--memory 1MiB --strategy checkpoint-all --steps 1");
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("alone exceeds the device memory"), std::string::npos) << run.err;
  run = RunBinary(REMAT_RUN_BINARY, "train --model nosuchnet --budget 1GiB --strategy "
                                    "checkpoint-all --steps 1");
  EXPECT_EQ(run.exit_code, 3) << run.err;
}

// Issue 14, defect 8: every option is range-checked (exit 2, a short message), NaN included,
// and a schedule file excludes the options it would silently override.
TEST(RunTrainCliTest, OptionsOutOfRangeAreUsageErrors) {
  for (const std::string args :
       {"--budget 100% --strategy checkpoint-all --steps 1 --threads 0",
        "--budget 100% --strategy checkpoint-all --steps 1 --threads -2",
        "--budget 100% --strategy checkpoint-all --steps 1 --threads 10000",
        "--budget 100% --strategy checkpoint-all --steps 1 --learning-rate nan",
        "--budget 100% --strategy checkpoint-all --steps 1 --time-limit 0",
        "--budget 100% --strategy checkpoint-all --steps 1 --time-limit -1"}) {
    const RunResult run = RunTrain(args);
    EXPECT_EQ(run.exit_code, 2) << args << ": " << run.err;
    EXPECT_LT(run.err.size(), 400u) << run.err;  // no backtrace, no 310-digit number
  }
  const RunResult profile = RunBinary(REMAT_RUN_BINARY, "profile --model vgg16 --repeats 0 -o x.json");
  EXPECT_EQ(profile.exit_code, 2) << profile.err;
  const RunResult warmup = RunBinary(REMAT_RUN_BINARY, "profile --model vgg16 --warmup -1 -o x.json");
  EXPECT_EQ(warmup.exit_code, 2) << warmup.err;
  const RunResult step = RunBinary(REMAT_RUN_BINARY, "step --model vgg16 --schedule s.json --budget 50%");
  EXPECT_EQ(step.exit_code, 2) << step.err;
}

// Issue 14, defect 9: the documented pipeline. A profile records the sizes it was measured at
// and `remat solve --costs` builds the model at them; a profile of other sizes names both.
TEST(RunProfileCliTest, ProfileThenSolveWithItsCostsWorksWithDefaults) {
  const std::string path = ::testing::TempDir() + "/vgg16-costs.json";
  const RunResult profile = RunBinary(
      REMAT_RUN_BINARY, "profile --model vgg16 --repeats 1 --warmup 0 -o " + path);
  ASSERT_EQ(profile.exit_code, 0) << profile.err;
  RunResult solve = RunBinary(REMAT_BINARY, "solve --model vgg16 --costs " + path +
                                                " --budget 100% --strategy checkpoint-all --json");
  ASSERT_EQ(solve.exit_code, 0) << solve.err;
  EXPECT_EQ(json::parse(solve.out)["graph"]["cost_unit"], "ms");
  solve = RunBinary(REMAT_BINARY, "solve --model vgg16 --batch 4 --costs " + path +
                                      " --budget 100% --strategy checkpoint-all");
  EXPECT_EQ(solve.exit_code, 3) << solve.err;
  EXPECT_NE(solve.err.find("measured on vgg16 (batch 2, classes 10, resolution 32x32)"),
            std::string::npos)
      << solve.err;
  EXPECT_NE(solve.err.find("the graph is vgg16 at batch 4, input 4x224x224x3"), std::string::npos)
      << solve.err;
}

// Issue 24, item 5: a schedule file whose simulated peak is over the budget it records (here
// hand-edited) is refused by remat-run step, naming the file, unless --allow-over-budget.
TEST(RunStepCliTest, AScheduleOverItsRecordedBudgetIsRefusedUnlessAllowed) {
  const std::string sizes = " --model vgg16 --batch 2 --resolution 32x32 --classes 10";
  const std::string path = ::testing::TempDir() + "/over-budget-schedule.json";
  const RunResult solve = RunBinary(
      REMAT_BINARY, "solve" + sizes + " --budget 100% --strategy checkpoint-all -o " + path);
  ASSERT_EQ(solve.exit_code, 0) << solve.err;
  json doc = json::parse(remat::testing::Slurp(path));
  doc["budget_bytes"] = doc["peak_bytes"].get<int64_t>() / 2;
  std::ofstream(path) << doc.dump();
  const RunResult refused = RunBinary(REMAT_RUN_BINARY, "step" + sizes + " --schedule " + path);
  EXPECT_EQ(refused.exit_code, 3) << refused.err;
  EXPECT_NE(refused.err.find(path + ": the schedule peaks at"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--allow-over-budget"), std::string::npos) << refused.err;
  const RunResult allowed = RunBinary(
      REMAT_RUN_BINARY, "step" + sizes + " --schedule " + path + " --allow-over-budget");
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
  std::remove(path.c_str());
}

// Issue 24, item 12: remat-run follows the CLI's rule for progress (a line on stderr only when
// it is a terminal; here stderr is a file) and prints sizes with units (item 11; --json keeps
// bytes). optimal's window search on MobileNet (too big for the whole MILP in 2 s) reports
// progress from its start: it used to reach stderr as "\r[optimal] ...\x1b[K" whatever stderr was.
TEST(RunStepCliTest, NoProgressOffATerminalAndSizesWithUnits) {
  const std::string model = "--model mobilenet --batch 2 --resolution 32x32 ";
  for (const std::string& verb : {"step " + model, "train " + model + "--steps 1 "}) {
    const RunResult run =
        RunBinary(REMAT_RUN_BINARY, verb + "--strategy optimal --budget 80% --time-limit 2");
    ASSERT_EQ(run.exit_code, 0) << verb << run.err;
    EXPECT_EQ(run.err.find('\r'), std::string::npos) << verb << run.err;
    EXPECT_EQ(run.err.find("\x1b[K"), std::string::npos) << verb << run.err;
    EXPECT_EQ(run.err.find("[optimal]"), std::string::npos) << verb << run.err;
    // Sizes for people: "1.23 MiB", never a raw count of thousands of bytes.
    EXPECT_NE(run.out.find(" MiB"), std::string::npos) << run.out;
    std::istringstream lines(run.out);
    std::string line;
    while (std::getline(lines, line)) {
      EXPECT_FALSE(std::regex_search(line, std::regex("[0-9]{4,} B\\b"))) << line;
      EXPECT_LE(line.size(), 120u) << line;
    }
  }
}

// Issue 34, item 7: --measured-workspace plans with each node's workspace measured on this
// machine, so that the measured peak is the predicted one where the zoo's estimates (fitted at
// 224x224 on one CPU) miss: VGG16 at 32x32 allocates ~27 MiB more in its last convolutions'
// backward than estimated. The second run reads the cache the first wrote, and plans the same.
TEST(RunTrainCliTest, MeasuredWorkspaceMakesThePredictedPeakTheMeasuredOne) {
  const std::string cache = ::testing::TempDir() + "/remat-cache-" + std::to_string(::getpid());
  const std::string env = "REMAT_CACHE_DIR=" + cache + " ";
  const std::string args = "--budget 100% --strategy checkpoint-all --steps 1 --json";
  const RunResult estimated = RunTrain(args);
  ASSERT_EQ(estimated.exit_code, 0) << estimated.err;
  const RunResult first = RunBinary(env + REMAT_RUN_BINARY,
                                    "train --model vgg16 --batch 2 --resolution 32x32 " + args +
                                        " --measured-workspace");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("measured on this machine now, cached in " + cache),
            std::string::npos)
      << first.err;
  const RunResult second = RunBinary(env + REMAT_RUN_BINARY,
                                     "train --model vgg16 --batch 2 --resolution 32x32 " + args +
                                         " --measured-workspace");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("read from " + cache), std::string::npos) << second.err;
  const json a = json::parse(estimated.out), b = json::parse(first.out),
             c = json::parse(second.out);
  const auto error = [](const json& doc) {
    const double predicted = doc["predicted_peak_bytes"].get<double>();
    return std::abs(doc["measured_peak_bytes"].get<double>() - predicted) / predicted;
  };
  EXPECT_LE(error(b), 0.05) << b.dump();
  EXPECT_EQ(b["predicted_peak_bytes"], c["predicted_peak_bytes"]);
  // The estimates' error depends on the CPU (27 MiB off on this one, within 0.3% on
  // another): not asserted, only reported when the measured one fails.
  EXPECT_LE(error(b), 0.05) << "estimated: " << a.dump();
  const RunResult both = RunTrain(args + " --measured-workspace --costs x.json");
  EXPECT_EQ(both.exit_code, 2) << both.err;
  std::filesystem::remove_all(cache);
}

// Issue 55: the workspace cache only saves time. An entry that is truncated, garbage, another
// graph's, absurd (2^62 bytes of workspace on one node) or a link (dangling here) is measured
// again, with a warning naming the entry; the run succeeds as without a cache, and the link's
// target is never written (the entry is replaced by a file of remat's). A cache folder that
// other users can write is not used.
TEST(RunTrainCliTest, AnUnusableWorkspaceCacheEntryIsMeasuredAgain) {
  namespace fs = std::filesystem;
  const fs::path cache =
      fs::path(::testing::TempDir()) / ("remat-cache-bad-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  const std::string env = "REMAT_CACHE_DIR=" + cache.string() + " ";
  const std::string args = "train --model vgg16 --batch 2 --resolution 32x32 --budget 100% "
                           "--strategy checkpoint-all --steps 1 --json --measured-workspace";
  ASSERT_EQ(RunBinary(env + REMAT_RUN_BINARY, args).exit_code, 0);
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(cache / "workspace")) {
    entries.push_back(entry.path());
  }
  ASSERT_EQ(entries.size(), 1u);
  const fs::path entry = entries[0];
  std::string good;
  {
    std::ifstream in(entry);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  json other = json::parse(good);
  other["structure_fingerprint"] = "0123456789abcdef";
  json absurd = json::parse(good);
  absurd["nodes"][1]["workspace_bytes"] = int64_t{1} << 62;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"truncated", good.substr(0, good.size() / 2)},
      {"garbage", "\x01\x02 not json"},
      {"another graph's", other.dump()},
      {"absurd", absurd.dump()},
      {"a dangling link", ""}};
  const fs::path target = cache / "elsewhere.json";
  for (const auto& [what, text] : cases) {
    fs::remove(entry);
    if (text.empty()) {
      fs::create_symlink(target, entry);
    } else {
      std::ofstream(entry) << text;
    }
    const RunResult run = RunBinary(env + REMAT_RUN_BINARY, args);
    EXPECT_EQ(run.exit_code, 0) << what << ": " << run.err;
    EXPECT_NE(run.err.find("warning"), std::string::npos) << what << ": " << run.err;
    EXPECT_NE(run.err.find(entry.string()), std::string::npos) << what << ": " << run.err;
    EXPECT_NE(run.err.find("measuring the workspace again"), std::string::npos) << what;
    EXPECT_NE(run.err.find("measured on this machine now, cached in"), std::string::npos)
        << what << ": " << run.err;
    EXPECT_FALSE(fs::is_symlink(entry)) << what;
  }
  EXPECT_FALSE(fs::exists(target));  // the link was replaced, never written through
  // The entry measured again is read by the next run, without a warning.
  const RunResult again = RunBinary(env + REMAT_RUN_BINARY, args);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.err.find("warning"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("read from " + entry.string()), std::string::npos) << again.err;
  // A cache folder writable by other users is not used: measured, not cached, said why.
  fs::permissions(cache / "workspace", fs::perms::all);
  const RunResult shared = RunBinary(env + REMAT_RUN_BINARY, args);
  EXPECT_EQ(shared.exit_code, 0) << shared.err;
  EXPECT_NE(shared.err.find("writable by other users"), std::string::npos) << shared.err;
  EXPECT_NE(shared.err.find("(not cached)"), std::string::npos) << shared.err;
  fs::remove_all(cache);
}

}  // namespace
}  // namespace remat::exec
