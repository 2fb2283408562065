// Issue 24: what a newcomer's files meet. An output that names an input is a usage error; an
// output that cannot be written is reported before the work, naming the path given; devices
// are refused as inputs while pipes read; a schedule over its budget is never written; `-o`
// with several strategies saves the cheapest that fits; an unknown --device is bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/run_remat.h"

namespace remat {
namespace {

using nlohmann::json;
using testing::RunRemat;
namespace fs = std::filesystem;

class InputsAndOutputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_EQ(RunRemat("graph linear 8 -o " + Path("l8.json")).exit_code, 0);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(InputsAndOutputsTest, AnOutputNamingAnInputIsAUsageError) {
  const std::string before = testing::Slurp(Path("l8.json"));
  const auto solve = RunRemat("solve --graph " + Path("l8.json") + " --budget 7 -o " +
                              Path("l8.json"));
  EXPECT_EQ(solve.exit_code, 2) << solve.err;
  EXPECT_NE(solve.err.find("would overwrite the input file"), std::string::npos) << solve.err;
  EXPECT_EQ(solve.out, "");  // refused before any work
  fs::create_symlink(Path("l8.json"), Path("link.json"));
  const auto convert = RunRemat("graph convert " + Path("l8.json") + " -o " + Path("link.json"));
  EXPECT_EQ(convert.exit_code, 2) << convert.err;
  EXPECT_EQ(testing::Slurp(Path("l8.json")), before);
  const auto plot = RunRemat("sweep --graph " + Path("l8.json") + " --points 2 --plot " +
                             Path("l8.svg") + " --strategies checkpoint-all");
  EXPECT_NE(plot.exit_code, 2) << plot.err;  // a sibling of the input is not the input
}

TEST_F(InputsAndOutputsTest, AnUnwritableOutputIsReportedBeforeTheWorkNamingThePathGiven) {
  const std::string out = Path("missing/plan.json");
  const auto solve = RunRemat("solve --graph " + Path("l8.json") + " --budget 7 -o " + out);
  EXPECT_EQ(solve.exit_code, 3);
  EXPECT_NE(solve.err.find(out), std::string::npos) << solve.err;
  EXPECT_EQ(solve.out, "");  // no table: the work never started
  const std::string plot = Path("missing/p.svg");
  const auto sweep = RunRemat("sweep --graph " + Path("l8.json") + " --points 2 --plot " + plot);
  EXPECT_EQ(sweep.exit_code, 3);
  EXPECT_NE(sweep.err.find(plot), std::string::npos) << sweep.err;
  EXPECT_EQ(sweep.err.find(".tmp."), std::string::npos) << sweep.err;
  EXPECT_EQ(sweep.out, "");
}

TEST_F(InputsAndOutputsTest, DevicesAreRefusedAsInputsButPipesRead) {
  for (const std::string device : {"/dev/zero", "/dev/urandom"}) {
    const auto info = RunRemat("graph info " + device);
    EXPECT_EQ(info.exit_code, 3) << device << ": " << info.err;
    EXPECT_NE(info.err.find(device + ": is a character device"), std::string::npos) << info.err;
  }
  const auto piped = RunRemat("graph info /dev/stdin < " + Path("l8.json"));
  EXPECT_EQ(piped.exit_code, 0) << piped.err;
  const auto through_cat =
      testing::RunBinary("cat " + Path("l8.json") + " | " + REMAT_BINARY, "graph info /dev/stdin");
  EXPECT_EQ(through_cat.exit_code, 0) << through_cat.err;
}

TEST_F(InputsAndOutputsTest, AScheduleOverTheBudgetIsNeverWritten) {
  const auto run = RunRemat("solve --graph " + Path("l8.json") +
                            " --budget 9 --strategy checkpoint-all -o " + Path("s.json"));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_FALSE(fs::exists(Path("s.json")));
  EXPECT_NE(run.err.find("not written"), std::string::npos) << run.err;
}

TEST_F(InputsAndOutputsTest, SeveralStrategiesSaveTheCheapestThatFits) {
  const std::string strategies = "checkpoint-all,chen-sqrtn-linear,griewank-logn,evict";
  const auto table = RunRemat("solve --graph " + Path("l8.json") + " --budget 7 --strategies " +
                              strategies + " --json");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  std::string cheapest;
  double cheapest_cost = 1e300;
  const json doc = json::parse(table.out);
  for (const json& row : doc["results"]) {
    const bool fits = row.contains("peak_bytes") && row["peak_bytes"].get<int64_t>() <= 7;
    if (fits && row["cost"].get<double>() < cheapest_cost) {
      cheapest_cost = row["cost"].get<double>();
      cheapest = row["strategy"].get<std::string>();
    }
  }
  ASSERT_FALSE(cheapest.empty());
  const auto run = RunRemat("solve --graph " + Path("l8.json") + " --budget 7 --strategies " +
                            strategies + " -o " + Path("s.json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json saved = json::parse(testing::Slurp(Path("s.json")));
  EXPECT_EQ(saved["strategy"], cheapest);
  EXPECT_EQ(saved["cost"].get<double>(), cheapest_cost);
  EXPECT_NE(run.out.find("schedule of " + cheapest), std::string::npos) << run.out;
}

TEST_F(InputsAndOutputsTest, AnUnknownDeviceIsBadInputWithAGraphFileToo) {
  for (const std::string verb : {"solve --budget 7", "sweep --points 2", "approx-report --points 2"}) {
    const auto run = RunRemat(verb + " --graph " + Path("l8.json") + " --device tpu");
    EXPECT_EQ(run.exit_code, 3) << verb << ": " << run.out;
    EXPECT_NE(run.err.find("unknown device 'tpu'"), std::string::npos) << verb << ": " << run.err;
  }
}

TEST_F(InputsAndOutputsTest, SizesBeyondTwoToThe62NameTheFile) {
  json graph = json::parse(testing::Slurp(Path("l8.json")));
  graph["nodes"][0]["bytes"] = int64_t{3} << 60;
  graph["nodes"][1]["bytes"] = int64_t{3} << 60;
  std::ofstream(Path("huge.json")) << graph.dump();
  const auto run = RunRemat("graph info " + Path("huge.json"));
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("2^62"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(Path("huge.json")), std::string::npos) << run.err;
  // A zoo model that large names the model and its batch in the same way.
  const auto zoo = RunRemat("solve --model vgg16 --batch 1000000 --resolution 60000x60000 "
                            "--budget 50%");
  EXPECT_EQ(zoo.exit_code, 3) << zoo.err;
  EXPECT_NE(zoo.err.find("error: vgg16 (batch 1000000): the sum of the nodes' bytes"),
            std::string::npos) << zoo.err;
}

// Item 14: `remat show` reads a saved plan back as text and JSON; its recomputations are
// those of the file's R matrix (every computation of a node after its first), by stage.
TEST_F(InputsAndOutputsTest, ShowListsEveryRecomputationByNodeAndStage) {
  ASSERT_EQ(RunRemat("solve --graph " + Path("l8.json") +
                     " --budget 5 --strategy chen-sqrtn-linear,optimal -o " + Path("p.json"))
                .exit_code,
            0);
  const json saved = json::parse(testing::Slurp(Path("p.json")));
  const auto run = RunRemat("show " + Path("p.json") + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json shown = json::parse(run.out);
  std::map<int, std::vector<int>> expected;
  int64_t evaluations = 0;
  for (size_t node = 0; node < saved["R"].size(); ++node) {
    std::vector<int> stages;
    for (const json& interval : saved["R"][node]) {
      for (int t = interval[0].get<int>(); t <= interval[1].get<int>(); ++t) stages.push_back(t);
    }
    evaluations += static_cast<int64_t>(stages.size());
    if (stages.size() > 1) expected[static_cast<int>(node)] = {stages.begin() + 1, stages.end()};
  }
  ASSERT_FALSE(expected.empty());  // at 5 B linear(8) must recompute
  std::map<int, std::vector<int>> listed;
  for (const json& r : shown["recomputed"]) {
    listed[r["node"].get<int>()] = r["stages"].get<std::vector<int>>();
  }
  EXPECT_EQ(listed, expected);
  EXPECT_EQ(shown["evaluations"].get<int64_t>(), evaluations);
  EXPECT_EQ(shown["cost"].get<double>(), static_cast<double>(evaluations));  // unit costs
  EXPECT_EQ(shown["strategy"], saved["strategy"]);
  const auto text = RunRemat("show " + Path("p.json"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const int first = expected.begin()->first;
  const int stage = expected.begin()->second.front();
  EXPECT_NE(text.out.find(fmt::format("v{} (#{})", first, first)), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(fmt::format("{} (v{})", stage, stage)), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(fmt::format("{} of 17 nodes are recomputed", expected.size())),
            std::string::npos) << text.out;
}

// Issue 34, item 8: an output that cannot be written says the real reason: a file where a
// folder should be, a path or name over the system's limits, a pipe behind /proc/self/fd, a
// control character in the name (which would break the message and gnuplot's script).
TEST_F(InputsAndOutputsTest, AnUnwritableOutputSaysTheRealReason) {
  const auto expect = [&](const std::string& output, const std::string& reason) {
    const auto run = RunRemat("graph linear 4 -o '" + output + "'");
    EXPECT_EQ(run.exit_code, 3) << output << run.err;
    EXPECT_NE(run.err.find(reason), std::string::npos) << run.err;
  };
  expect(Path("l8.json") + "/x.json", "l8.json is a file, not a folder");
  expect(Path(std::string(300, 'a')), "a name in the path is 300 characters long");
  std::string deep;
  for (int i = 0; i < 3000; ++i) deep += "a/";
  expect(Path(deep + "x.json"), "characters long, over this system's limit of");
  // std::system's shell makes the newline; the message shows it escaped, not as a break.
  const auto newline =
      RunRemat("graph linear 4 -o \"$(printf '" + Path("a") + "\\nb.json')\"");
  EXPECT_EQ(newline.exit_code, 3) << newline.err;
  EXPECT_NE(newline.err.find("a\\nb.json\": the output name contains a control character"),
            std::string::npos)
      << newline.err;
  const auto pipe = testing::RunBinary(
      "( " + std::string(REMAT_BINARY) + " graph linear 4 -o /proc/self/fd/1 | cat )", "");
  EXPECT_NE(pipe.err.find("/proc/self/fd/1: is a FIFO; remat writes only regular files"),
            std::string::npos)
      << pipe.err;
  const auto plot = RunRemat("sweep --graph " + Path("l8.json") + " --points 2 --strategies "
                             "checkpoint-all --plot \"$(printf '" + Path("p") + "\\nq.svg')\"");
  EXPECT_EQ(plot.exit_code, 3) << plot.err;
  EXPECT_NE(plot.err.find("the output name contains a control character"), std::string::npos)
      << plot.err;
}

// Issue 34, item 6: out of memory is "out of memory", exit 70, wherever it strikes: reading
// the file (a stream used to swallow the failure), parsing it or unwinding after (a large JSON
// document allocates while it is destroyed). Under a 400 MB address-space limit a 40 MB graph
// file runs out in each of those, depending on the limit; the process never aborts.
TEST_F(InputsAndOutputsTest, OutOfMemoryExitsSeventyWithTheReason) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit allows";
#else
  ASSERT_EQ(RunRemat("graph random-layered --nodes 200000 --width 100 --edges 600000 --seed 1 "
                     "-o " + Path("mid.json"))
                .exit_code,
            0);
  for (const int limit_kib : {300000, 400000, 500000}) {
    const auto run = testing::RunBinary(
        fmt::format("ulimit -v {}; {}", limit_kib, REMAT_BINARY),
        "solve --graph " + Path("mid.json") + " --budget 50% --strategy evict --time-limit 10 "
        "--quiet");
    EXPECT_EQ(run.exit_code, 70) << limit_kib << ": " << run.err;
    EXPECT_NE(run.err.find("remat: out of memory"), std::string::npos) << limit_kib << run.err;
  }
#endif
}

// Writing a graph of a billion requested edges under a 1 GB address space: the allocation
// that fails first is in the document being built, and destroying that document during the
// unwinding needs more memory than the reserve kept back, inside a destructor (which may not
// throw). That too is "out of memory", exit 70, and no output file (it aborted before).
TEST_F(InputsAndOutputsTest, OutOfMemoryInsideADestructorExitsSeventy) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit allows";
#else
  const auto run = testing::RunBinary(
      fmt::format("ulimit -v 1000000; {}", REMAT_BINARY),
      "graph random-layered --nodes 1000000 --edges 2147483648 -o " + Path("huge.json"));
  EXPECT_EQ(run.exit_code, 70) << run.err;
  EXPECT_NE(run.err.find("remat: out of memory"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(Path("huge.json")));
#endif
}

}  // namespace
}  // namespace remat
