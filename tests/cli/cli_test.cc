// Golden CLI tests: the remat binary on tiny inputs, with expected numbers worked out by hand.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/run_remat.h"
#include "core/cost_profile.h"
#include "core/graph.h"
#include "core/graph_json.h"
#include "core/training_graph.h"

namespace remat {
namespace {

using nlohmann::json;
using testing::RunRemat;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(CliTest, LinearEightSolveJsonHasTheHandComputedNumbers) {
  ASSERT_EQ(RunRemat("graph linear 8 -o " + Path("l8.json")).exit_code, 0);
  const auto run = RunRemat("solve --graph " + Path("l8.json") +
                            " --budget 7 --strategy checkpoint-all,chen-sqrtn-linear --json");
  // checkpoint-all peaks at 10 > 7 but chen fits, so the run succeeds.
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["schema"], "remat.solve/2");
  EXPECT_EQ(doc["budget_bytes"], 7);
  EXPECT_EQ(doc["no_remat_peak_bytes"], 10);
  EXPECT_EQ(doc["min_peak_lower_bound_bytes"], 3);  // bwd(i) with its inputs i and bwd(i+1)
  ASSERT_EQ(doc["results"].size(), 2u);
  EXPECT_EQ(doc["results"][0]["strategy"], "checkpoint-all");
  EXPECT_EQ(doc["results"][0]["status"], "over_budget");
  EXPECT_EQ(doc["results"][0]["cost"], 17.0);
  EXPECT_EQ(doc["results"][1]["status"], "fits");
  EXPECT_EQ(doc["results"][1]["cost"], 21.0);
  EXPECT_DOUBLE_EQ(doc["results"][1]["overhead"].get<double>(), 21.0 / 17.0);
}

TEST_F(CliTest, OptimalOnLinearEightIsCertifiedByTheLpBound) {
  ASSERT_EQ(RunRemat("graph linear 8 -o " + Path("l8.json")).exit_code, 0);
  const auto run = RunRemat("solve --graph " + Path("l8.json") +
                            " --budget 7 --strategy optimal,chen-sqrtn-linear --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  const json& optimal = doc["results"][0];
  EXPECT_EQ(optimal["solver_status"], "optimal");
  EXPECT_LE(optimal["peak_bytes"].get<int64_t>(), 7);
  // The LP bound is a valid lower bound; a schedule achieving it is optimal. Chen's 21 is
  // above it, so the optimum must be at most 21 and at least the bound.
  const double bound = doc["lower_bound_cost"].get<double>();
  EXPECT_LE(bound, optimal["cost"].get<double>() + 1e-9);
  EXPECT_LE(optimal["cost"].get<double>(), 21.0);
  EXPECT_NEAR(optimal["gap_to_lower_bound"].get<double>(),
              (optimal["cost"].get<double>() - bound) / optimal["cost"].get<double>(), 1e-12);
}

TEST_F(CliTest, CostProfileReplacesTheGraphsCosts) {
  ASSERT_EQ(RunRemat("graph linear 3 -o " + Path("l3.json")).exit_code, 0);
  // Node i costs i + 0.5 ms: the no-remat cost of 7 nodes is 0.5 + 1.5 + ... + 6.5 = 24.5.
  const Graph g = LinearGraph(3);
  CostProfile profile{.structure_fingerprint = StructureFingerprint(g), .model = "linear(3)"};
  for (int32_t v = 0; v < g.size(); ++v) profile.nodes.push_back({v, g.node(v).name, v + 0.5});
  SaveCostProfile(profile, Path("costs.json"));
  const auto run = RunRemat("solve --graph " + Path("l3.json") + " --costs " + Path("costs.json") +
                            " --budget 100% --strategy checkpoint-all --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["graph"]["cost_unit"], "ms");
  EXPECT_DOUBLE_EQ(doc["no_remat_cost"].get<double>(), 24.5);
  // A profile of another graph is refused as bad input.
  ASSERT_EQ(RunRemat("graph linear 4 -o " + Path("l4.json")).exit_code, 0);
  const auto wrong = RunRemat("solve --graph " + Path("l4.json") + " --costs " +
                              Path("costs.json") + " --budget 100%");
  EXPECT_EQ(wrong.exit_code, 3);
  EXPECT_NE(wrong.err.find("costs.json"), std::string::npos) << wrong.err;
}

TEST_F(CliTest, PercentBudgetIsTakenOfTheNoRematPeak) {
  ASSERT_EQ(RunRemat("graph linear 8 -o " + Path("l8.json")).exit_code, 0);
  const auto run = RunRemat("solve --graph " + Path("l8.json") + " --budget 70% --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(json::parse(run.out)["budget_bytes"], 7);  // 70% of 10 bytes
}

TEST_F(CliTest, OverBudgetStrategyExitsOneAndSaysSo) {
  ASSERT_EQ(RunRemat("graph linear 8 -o " + Path("l8.json")).exit_code, 0);
  const auto run = RunRemat("solve --graph " + Path("l8.json") +
                            " --budget 9 --strategy checkpoint-all");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find("over budget"), std::string::npos) << run.out;
}

TEST_F(CliTest, BudgetBelowTheMinimumExitsOneWithAnExplanation) {
  ASSERT_EQ(RunRemat("graph linear 8 -o " + Path("l8.json")).exit_code, 0);
  const auto run = RunRemat("solve --graph " + Path("l8.json") + " --budget 2");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find("below this graph's minimum peak 3 B"), std::string::npos) << run.out;
}

TEST_F(CliTest, SavedScheduleRoundTripsThroughTheFile) {
  ASSERT_EQ(RunRemat("graph linear 8 -o " + Path("l8.json")).exit_code, 0);
  const auto run = RunRemat("solve --graph " + Path("l8.json") +
                            " --budget 7 --strategy chen-sqrtn-linear -o " + Path("s.json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(testing::Slurp(Path("s.json")));
  EXPECT_EQ(doc["schema"], "remat.schedule/1");
  EXPECT_EQ(doc["cost"], 21.0);
  EXPECT_EQ(doc["budget_bytes"], 7);
  // Node 0 is computed in stage 0 and again for its gradient bwd(0) = stage 16.
  EXPECT_EQ(doc["R"][0], json::parse("[[0,0],[16,16]]"));
}

TEST_F(CliTest, ConvertsNodeLinkAndReportsInfo) {
  const auto convert = RunRemat("graph convert " + std::string(REMAT_TEST_DATA) +
                                "/node_link_tiny.json -o " + Path("g.json"));
  ASSERT_EQ(convert.exit_code, 0) << convert.err;
  const auto info = RunRemat("graph info " + Path("g.json") + " --json");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  const json doc = json::parse(info.out);
  EXPECT_EQ(doc["nodes"], 5);
  EXPECT_EQ(doc["edges"], 6);
  EXPECT_EQ(doc["loss_node"], 2);
  EXPECT_EQ(doc["total_cost"], 15.5);  // 3 + 2 + 0.5 + 4 + 6
  // No-remat peak: at conv_grad (node 4) conv (400), fc_grad (40) and conv_grad (400) are live;
  // at fc_grad only 400 + 40 + 4 + 40 = 484.
  EXPECT_EQ(doc["no_remat_peak_bytes"], 840);
  // Lower bound: conv_grad (400) with its inputs conv (400) and fc_grad (40).
  EXPECT_EQ(doc["min_peak_lower_bound_bytes"], 840);
}

TEST_F(CliTest, UsageErrorsExitTwo) {
  ASSERT_EQ(RunRemat("graph linear 4 -o " + Path("l4.json")).exit_code, 0);
  EXPECT_EQ(RunRemat("solve --graph " + Path("l4.json") + " --budget 10 --strategy nope")
                .exit_code,
            2);
  const auto bad_size = RunRemat("solve --graph " + Path("l4.json") + " --budget 12XB");
  EXPECT_EQ(bad_size.exit_code, 2);
  EXPECT_NE(bad_size.err.find("invalid size '12XB'"), std::string::npos) << bad_size.err;
  EXPECT_EQ(RunRemat("frobnicate").exit_code, 2);
  EXPECT_EQ(RunRemat("solve --budget 10").exit_code, 2);  // no graph
  EXPECT_EQ(RunRemat("--version").exit_code, 0);
}

TEST_F(CliTest, StructureStrategiesRefuseUnlabeledDags) {
  const auto run = RunRemat("solve --graph " + std::string(REMAT_TEST_DATA) +
                            "/unlabeled_dag.json --budget 100% --strategy chen-sqrtn-ap");
  EXPECT_EQ(run.exit_code, 3);
  EXPECT_NE(run.err.find("needs a training graph"), std::string::npos) << run.err;
  const auto all = RunRemat("solve --graph " + std::string(REMAT_TEST_DATA) +
                            "/unlabeled_dag.json --budget 100% --json");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  // checkpoint-all, the two any-DAG heuristics and the three solvers apply; Chen and Griewank
  // do not.
  std::vector<std::string> names;
  const json doc = json::parse(all.out);
  for (const auto& row : doc["results"]) names.push_back(row["strategy"]);
  EXPECT_EQ(names, (std::vector<std::string>{"checkpoint-all", "evict", "local-search", "approx",
                                             "approx-randomized", "optimal"}));
}

// A generated random DAG: reproducible from its options, and every row of a solve on it
// carries the best bound (absence-gap here: 120 nodes is too many for the LP in 2 s).
TEST_F(CliTest, RandomLayeredGraphIsReproducibleAndSolvable) {
  const std::string options = " --nodes 120 --width 6 --edges 500 --seed 4 --max-bytes 8388608";
  ASSERT_EQ(RunRemat("graph random-layered" + options + " -o " + Path("a.json")).exit_code, 0);
  ASSERT_EQ(RunRemat("graph random-layered" + options + " -o " + Path("b.json")).exit_code, 0);
  EXPECT_EQ(testing::Slurp(Path("a.json")), testing::Slurp(Path("b.json")));
  const auto info = RunRemat("graph info --json " + Path("a.json"));
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_EQ(json::parse(info.out)["nodes"], 120);
  const auto run = RunRemat("solve --graph " + Path("a.json") +
                            " --budget 95% --strategy evict,local-search,optimal --time-limit 2 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["lower_bound_source"], "absence-gap");
  const double bound = doc["lower_bound_cost"];
  for (const json& row : doc["results"]) {
    ASSERT_EQ(row["status"], "fits") << row.dump();
    EXPECT_LE(bound, row["cost"].get<double>() + 1e-6);
  }
  EXPECT_EQ(RunRemat("graph random-layered --nodes 0 -o " + Path("c.json")).exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(Path("c.json")));
}

// Issue 14, defect 3: with --verbose, CLP's and CBC's logs go to stderr and stdout stays JSON.
TEST_F(CliTest, VerboseSolverLogsNeverReachStdout) {
  ASSERT_EQ(RunRemat("graph linear 8 -o " + Path("l8.json")).exit_code, 0);
  const auto run = RunRemat("solve --graph " + Path("l8.json") +
                            " --budget 6 --strategy approx,optimal --json --verbose");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NO_THROW(json::parse(run.out)) << run.out.substr(0, 300);
  EXPECT_FALSE(run.err.empty());  // the logs went somewhere
}

// Issue 14, defect 2: -o '' is a usage error, -o to a device is bad input, and neither
// touches the file system.
TEST_F(CliTest, OutputPathsThatAreNotRegularFilesAreRefused) {
  const auto empty = RunRemat("graph linear 4 -o ''");
  EXPECT_EQ(empty.exit_code, 2) << empty.err;
  const auto device = RunRemat("graph linear 4 -o /dev/full");
  EXPECT_EQ(device.exit_code, 3) << device.err;
  EXPECT_NE(device.err.find("/dev/full: is a character device"), std::string::npos) << device.err;
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/full"));
}

// Issue 14, defect 10: a graph of only a loss node is labeled but has no forward pass. `all`
// skips the baselines that need one, and `optimal` never fails because of its start.
TEST_F(CliTest, LossOnlyGraphSkipsForwardBaselines) {
  {
    std::ofstream out(Path("loss.json"));
    out << R"({"schema": "remat.graph/1", "cost_unit": "flop", "nodes": [)"
        << R"({"id": 0, "name": "loss", "kind": "loss", "cost": 1, "bytes": 4}], "edges": []})";
  }
  const auto all = RunRemat("solve --graph " + Path("loss.json") + " --budget 4 --json");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  std::vector<std::string> names;
  const json doc = json::parse(all.out);
  for (const auto& row : doc["results"]) {
    names.push_back(row["strategy"]);
    // The roundings plan for (1 - eps) of the budget, below this graph's only node.
    if (row["strategy"] != "approx" && row["strategy"] != "approx-randomized") {
      EXPECT_EQ(row["status"], "fits") << row.dump();
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"checkpoint-all", "evict", "local-search", "approx",
                                             "approx-randomized", "optimal"}));
  const auto optimal =
      RunRemat("solve --graph " + Path("loss.json") + " --budget 4 --strategy optimal --json");
  EXPECT_EQ(optimal.exit_code, 0) << optimal.err;
}

// Issue 14, defect 11: optimal without time to prove anything saves "feasible" and the bound
// in the schedule file (the plot title is built from those two fields).
TEST_F(CliTest, SavedScheduleSaysFeasibleWhenNotProven) {
  // linear(16) at 6 B: optimum 47, bounds 45; CBC does not prove it in 60 s. The start gets a
  // quarter of the limit, so 2 s leaves it time even under ASan on a loaded machine.
  ASSERT_EQ(RunRemat("graph linear 16 -o " + Path("l16.json")).exit_code, 0);
  const auto run = RunRemat("solve --graph " + Path("l16.json") +
                            " --budget 6 --strategy optimal --time-limit 2 -o " + Path("s.json"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(testing::Slurp(Path("s.json")));
  EXPECT_EQ(doc["strategy"], "optimal");
  EXPECT_EQ(doc["solver_status"], "feasible");
  EXPECT_TRUE(doc["lower_bound_cost"].is_number());
}

// Issue 14, defect 4: all-zero costs make every ratio undefined: the table prints "-", never
// "nan" or "inf".
TEST_F(CliTest, UndefinedRatiosPrintADash) {
  {
    std::ofstream out(Path("zero.json"));
    out << R"({"schema": "remat.graph/1", "cost_unit": "flop", "nodes": [)"
        << R"({"id": 0, "name": "a", "kind": "unlabeled", "cost": 0, "bytes": 4},)"
        << R"({"id": 1, "name": "b", "kind": "unlabeled", "cost": 0, "bytes": 4}],)"
        << R"( "edges": [[0, 1]]})";
  }
  const auto run = RunRemat("solve --graph " + Path("zero.json") + " --budget 8 --strategy checkpoint-all,evict");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.find("nan"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("inf"), std::string::npos) << run.out;
}

// Issue 14, defect 8: NaN, infinities and out-of-range reals are usage errors (exit 2).
TEST_F(CliTest, RealOptionsRejectNanAndInfinity) {
  for (const std::string args : {"--time-limit nan", "--time-limit 0", "--gap nan", "--gap 1e400",
                                 "--eps inf", "--eps -0.1"}) {
    const auto run = RunRemat("solve --model vgg16 --budget 90% --strategy checkpoint-all " + args);
    EXPECT_EQ(run.exit_code, 2) << args << ": " << run.err;
    EXPECT_LT(run.err.size(), 300u) << run.err;
  }
  const auto maxbatch = RunRemat("maxbatch --model vgg16 --memory 16e9 --max-overhead nan");
  EXPECT_EQ(maxbatch.exit_code, 2) << maxbatch.err;
}

// --- --workspace (docs/zoo.md, "Workspace") ---------------------------------------------------

constexpr const char* kTinyVgg = "vgg16 --batch 1 --resolution 32x32 --classes 10";

int64_t TotalWorkspaceBytes(const Graph& graph) {
  int64_t total = 0;
  for (const Node& node : graph.nodes()) total += node.workspace_bytes;
  return total;
}

// The no-remat peak `remat solve` reports for `source` (checkpoint-all's simulated peak).
int64_t SolvedNoRematPeak(const std::string& source) {
  const auto run = RunRemat("solve " + source +
                            " --budget 100% --strategy checkpoint-all --no-lower-bound --json");
  EXPECT_EQ(run.exit_code, 0) << source << ": " << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["results"][0]["peak_bytes"], doc["no_remat_peak_bytes"]) << source;
  return doc["no_remat_peak_bytes"].get<int64_t>();
}

TEST_F(CliTest, WorkspaceNoneZeroesEveryNodeAndThePeakIsThatOfTheBytesAlone) {
  ASSERT_EQ(RunRemat(std::string("zoo export ") + kTinyVgg + " -o " + Path("cpu.json")).exit_code,
            0);
  ASSERT_EQ(RunRemat(std::string("zoo export ") + kTinyVgg + " --workspace none -o " +
                     Path("none.json")).exit_code, 0);
  const Graph cpu = LoadGraphFile(Path("cpu.json"));
  const Graph none = LoadGraphFile(Path("none.json"));
  ASSERT_EQ(none.size(), cpu.size());
  for (int32_t v = 0; v < none.size(); ++v) {
    EXPECT_EQ(none.node(v).workspace_bytes, 0) << none.node(v).name;
    EXPECT_EQ(none.node(v).bytes, cpu.node(v).bytes) << none.node(v).name;
    EXPECT_EQ(none.node(v).cost, cpu.node(v).cost) << none.node(v).name;
  }
  // Max pooling's indices alone give the default graph some workspace.
  EXPECT_GT(TotalWorkspaceBytes(cpu), 0);
  // Without workspace the peak is the node outputs' alone: the default graph's with every
  // workspace set to 0, and below the default graph's own peak.
  const int64_t bytes_alone = NoRematPeakBytes(WithoutWorkspace(cpu));
  const int64_t peak = SolvedNoRematPeak(std::string("--model ") + kTinyVgg + " --workspace none");
  EXPECT_EQ(peak, bytes_alone);
  EXPECT_EQ(peak, NoRematPeakBytes(none));
  EXPECT_LT(peak, SolvedNoRematPeak(std::string("--model ") + kTinyVgg));
}

TEST_F(CliTest, WorkspacePortableWithoutADeviceDiffersFromCpuOnAConvModel) {
  auto export_with = [&](const std::string& name, const std::string& options) {
    const auto run = RunRemat(std::string("zoo export ") + kTinyVgg + " " + options + " -o " +
                              Path(name + ".json"));
    EXPECT_EQ(run.exit_code, 0) << options << ": " << run.err;
    return LoadGraphFile(Path(name + ".json"));
  };
  const Graph cpu = export_with("cpu", "--workspace cpu");
  const Graph portable = export_with("portable", "--workspace portable");
  const Graph by_default = export_with("default", "");
  const Graph on_device = export_with("device", "--device v100-16gb");
  ASSERT_EQ(portable.size(), cpu.size());
  // block1_conv2 is a 3x3 convolution: on the CPU oneDNN makes blocked copies of its output,
  // or of its input and weights, which the portable estimate leaves out (it has no fused
  // softmax, so its portable forward workspace is 0).
  int32_t conv = -1;
  for (int32_t v = 0; v < cpu.size(); ++v) {
    if (cpu.node(v).name == "block1_conv2") conv = v;
  }
  ASSERT_GE(conv, 0);
  EXPECT_GT(cpu.node(conv).workspace_bytes, 0);
  EXPECT_EQ(portable.node(conv).workspace_bytes, 0);
  EXPECT_GT(TotalWorkspaceBytes(cpu), TotalWorkspaceBytes(portable));
  // The defaults are unchanged: cpu without a device, portable with one (FLOP costs do not
  // depend on the device).
  EXPECT_EQ(GraphFingerprint(by_default), GraphFingerprint(cpu));
  EXPECT_EQ(GraphFingerprint(on_device), GraphFingerprint(portable));
  // An explicit choice wins over the device's.
  EXPECT_EQ(GraphFingerprint(export_with("device_cpu", "--device v100-16gb --workspace cpu")),
            GraphFingerprint(cpu));
}

TEST_F(CliTest, WorkspaceOnAGraphFileCanOnlyZeroIt) {
  ASSERT_EQ(RunRemat(std::string("zoo export ") + kTinyVgg + " -o " + Path("g.json")).exit_code,
            0);
  const std::string graph = "--graph " + Path("g.json");
  for (const std::string choice : {"cpu", "portable"}) {
    const auto run = RunRemat("solve " + graph + " --workspace " + choice + " --budget 100%");
    EXPECT_EQ(run.exit_code, 2) << choice;
    EXPECT_NE(run.err.find("carries its own workspace"), std::string::npos) << run.err;
  }
  EXPECT_EQ(RunRemat("solve " + graph + " --workspace gpu --budget 100%").exit_code, 2);
  EXPECT_EQ(RunRemat("sweep " + graph + " --workspace cpu --points 2 --quiet").exit_code, 2);
  const Graph file = LoadGraphFile(Path("g.json"));
  EXPECT_EQ(SolvedNoRematPeak(graph + " --workspace none"),
            NoRematPeakBytes(WithoutWorkspace(file)));
  EXPECT_EQ(SolvedNoRematPeak(graph), NoRematPeakBytes(file));
}

}  // namespace
// Issue 14, "one language": every planning verb takes the same solver options, --strategy
// (and its alias --strategies) and --verbose, from one shared definition.
TEST_F(CliTest, PlanningVerbsShareTheirOptions) {
  for (const std::string verb : {"solve", "sweep", "maxbatch", "approx-report"}) {
    const auto run = RunRemat(verb + " --help");
    ASSERT_EQ(run.exit_code, 0) << verb;
    for (const std::string option :
         {"--time-limit", "--threads", "--gap", "--seed", "--verbose", "--workspace"}) {
      EXPECT_NE(run.out.find(option), std::string::npos) << verb << " lacks " << option;
    }
    EXPECT_NE(run.out.find("INT:INT in [1 - 256]"), std::string::npos) << verb << ": --threads range";
  }
  for (const std::string verb : {"solve", "sweep", "maxbatch"}) {
    EXPECT_NE(RunRemat(verb + " --help").out.find("--strategy"), std::string::npos) << verb;
  }
  // A sweep row names its choice `parameters`, as solve's rows do.
  ASSERT_EQ(RunRemat("graph linear 6 -o " + Path("l6.json")).exit_code, 0);
  const auto sweep = RunRemat("sweep --graph " + Path("l6.json") +
                              " --strategies checkpoint-all --points 2 --json --quiet");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  const auto row = nlohmann::json::parse(sweep.out)["points"][0]["results"][0];
  EXPECT_TRUE(row.contains("parameters")) << row.dump();
  EXPECT_FALSE(row.contains("choice"));
}

// Issue 24, item 10: the status column says what is proven. Chen's 21 on linear(8) at 7 bytes
// is above the LP bound 20: feasible, not optimal; optimal's 20 meets it: optimal. Both fit,
// as the JSON's `status` still says; its `verdict` is the table's word.
TEST_F(CliTest, StatusSaysOptimalOnlyWhenProven) {
  ASSERT_EQ(RunRemat("graph linear 8 -o " + Path("l8.json")).exit_code, 0);
  const std::string args =
      "solve --graph " + Path("l8.json") + " --budget 7 --strategy chen-sqrtn-linear,optimal";
  const auto run = RunRemat(args);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto status_of = [&](const std::string& strategy) {
    std::istringstream lines(run.out);
    std::string line;
    while (std::getline(lines, line)) {
      std::istringstream words(line);
      std::string first;
      std::string second;
      if (words >> first >> second && first == strategy) return second;
    }
    return std::string("(no row)");
  };
  EXPECT_EQ(status_of("chen-sqrtn-linear"), "feasible") << run.out;
  EXPECT_EQ(status_of("optimal"), "optimal") << run.out;
  EXPECT_EQ(run.out.find("fits"), std::string::npos) << run.out;
  const auto json_run = RunRemat(args + " --json");
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  const json doc = json::parse(json_run.out);
  EXPECT_EQ(doc["results"][0]["status"], "fits");
  EXPECT_EQ(doc["results"][0]["verdict"], "feasible");
  EXPECT_EQ(doc["results"][1]["status"], "fits");
  EXPECT_EQ(doc["results"][1]["verdict"], "optimal");
}

// Issue 24, item 11: a budget 461 B below a minimum peak of 3 MiB reads 2.9996 MiB against
// 3.0000 MiB (not "3.00 MiB" twice, nor raw bytes), and the message names the smallest budget
// for which a strategy found a schedule.
TEST_F(CliTest, BudgetBelowTheMinimumPeakShowsSizesThatDifferAndWhatWorks) {
  const Graph small = LinearGraph(8);
  std::vector<Node> nodes = small.nodes();
  for (Node& node : nodes) node.bytes <<= 20;  // 1 MiB each: the minimum peak is 3 MiB
  SaveGraphFile(Graph(nodes, small.edges(), "unit", "linear(8) in MiB"), Path("big.json"));
  const auto run = RunRemat("solve --graph " + Path("big.json") + " --budget " +
                            std::to_string((3 << 20) - 461) +
                            " --strategy checkpoint-all,chen-sqrtn-linear");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  std::string out = run.out;  // the message is wrapped at 120 columns: join its lines
  for (size_t at = out.find("\n  "); at != std::string::npos; at = out.find("\n  ", at)) {
    out.replace(at, 3, " ");
  }
  EXPECT_NE(out.find("the budget 2.9996 MiB is below this graph's minimum peak 3.0000 MiB"),
            std::string::npos)
      << run.out;
  // chen-sqrtn-linear peaks at 6 of linear(8)'s bytes: 6 MiB, the smallest peak found.
  EXPECT_NE(out.find("the smallest budget for which remat found a schedule is 6.00 MiB"),
            std::string::npos)
      << run.out;
  const auto json_run = RunRemat("solve --graph " + Path("big.json") + " --budget " +
                                 std::to_string((3 << 20) - 461) +
                                 " --strategy checkpoint-all,chen-sqrtn-linear --json");
  EXPECT_EQ(json_run.exit_code, 1);
  EXPECT_EQ(json::parse(json_run.out)["smallest_peak_found_bytes"], 6 << 20);
}

// Issue 24, item 12: human output stays within 120 columns (the strategies' choices are
// sentences below the table), and no internal phrase stands for a sentence.
TEST_F(CliTest, HumanOutputStaysWithin120ColumnsInSentences) {
  ASSERT_EQ(RunRemat("graph linear 8 -o " + Path("l8.json")).exit_code, 0);
  const auto solve = RunRemat("solve --graph " + Path("l8.json") + " --budget 7");
  ASSERT_EQ(solve.exit_code, 0) << solve.err;
  const auto sweep = RunRemat("sweep --graph " + Path("l8.json") + " --points 3 --quiet");
  ASSERT_EQ(sweep.exit_code, 0) << sweep.err;
  const auto approx = RunRemat("approx-report --graph " + Path("l8.json") + " --points 3 --quiet");
  ASSERT_EQ(approx.exit_code, 0) << approx.err;
  for (const std::string& out : {solve.out, sweep.out, approx.out}) {
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) EXPECT_LE(line.size(), 120u) << line;
  }
  // A rounding whose LP is skipped (too big for the time limit) says so in words.
  const auto skipped = RunRemat("solve --graph " + Path("l8.json") +
                                " --budget 7 --strategy approx,chen-sqrtn-linear "
                                "--time-limit 0.001 --no-lower-bound");
  EXPECT_EQ(skipped.out.find("time_limit_no_solution"), std::string::npos) << skipped.out;
  EXPECT_EQ(solve.out.find("segment of"), std::string::npos) << solve.out;
  EXPECT_NE(solve.out.find("one in 2 of the 8 candidate nodes kept"), std::string::npos)
      << solve.out;
}

}  // namespace remat
