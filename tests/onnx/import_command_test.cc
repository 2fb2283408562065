// Golden tests of `remat import` and of --onnx in `remat solve`, run on the binary.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/run_remat.h"
#include "core/graph.h"
#include "core/graph_json.h"

namespace remat {
namespace {

using testing::RunRemat;
using testing::TempDir;

std::string Data(const std::string& name) {
  return std::string(REMAT_ONNX_TESTDATA) + "/" + name;
}

TEST(ImportCommandTest, WritesTheTrainingGraph) {
  const auto dir = TempDir("import");
  const std::string out = (dir / "mlp.json").string();
  const auto run = RunRemat("import " + Data("tiny_mlp.onnx") + " -o " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("4 forward"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("2 aliases"), std::string::npos) << run.out;
  const Graph graph = LoadGraphFile(out);
  EXPECT_EQ(graph.size(), 9);  // 4 forward, the loss, 4 backward
  EXPECT_EQ(graph.cost_unit(), "flop");
  EXPECT_EQ(graph.name(), "tiny_mlp (onnx, batch 4)");
  std::filesystem::remove_all(dir);
}

TEST(ImportCommandTest, JsonSummaryAndBatch) {
  const auto dir = TempDir("import_json");
  const std::string out = (dir / "r.json").string();
  const auto run =
      RunRemat("import " + Data("resnet50.onnx") + " --batch 8 --json -o " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["schema"], "remat.import/1");
  EXPECT_EQ(doc["batch"], 8);
  EXPECT_TRUE(doc["exported_batch"].is_null());
  EXPECT_EQ(doc["graph"]["nodes"], 351);  // 175 forward nodes
  EXPECT_EQ(doc["onnx"]["forward_nodes"], 175);
  EXPECT_EQ(doc["fixed_memory"]["input_bytes"], int64_t{8} * 3 * 224 * 224 * 4);
  std::filesystem::remove_all(dir);
}

TEST(ImportCommandTest, BadInputsExitThreeNamingTheFile) {
  const auto dir = TempDir("import_bad");
  const std::string out = (dir / "out.json").string();
  const std::string junk = (dir / "junk.onnx").string();
  std::ofstream(junk) << "definitely not protobuf {}";
  struct Case {
    std::string file;
    std::string expected;
  };
  for (const Case& c : {Case{junk, "not an ONNX model"},
                        Case{Data("resnet50.onnx"), "--batch"},
                        Case{Data("unsupported_lstm.onnx"), "'LSTM' (node 'encoder_lstm')"},
                        Case{(dir / "missing.onnx").string(), "missing.onnx"}}) {
    SCOPED_TRACE(c.file);
    const auto run = RunRemat("import " + c.file + " -o " + out);
    EXPECT_EQ(run.exit_code, 3);
    EXPECT_NE(run.err.find(c.file), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(c.expected), std::string::npos) << run.err;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
  std::filesystem::remove_all(dir);
}

TEST(ImportCommandTest, UnknownOpsZeroCost) {
  const auto dir = TempDir("import_zero");
  const std::string out = (dir / "l.json").string();
  const auto run = RunRemat("import " + Data("unsupported_lstm.onnx") +
                            " --unknown-ops=zero-cost -o " + out);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("LSTM (encoder_lstm)"), std::string::npos) << run.out;
  std::filesystem::remove_all(dir);
}

TEST(ImportCommandTest, SolveAcceptsOnnx) {
  const auto run = RunRemat("solve --onnx " + Data("resnet18.onnx") +
                            " --batch 4 --memory 16GiB --optimizer adam --strategy "
                            "checkpoint-all,chen-sqrtn-linear --no-lower-bound --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  EXPECT_EQ(doc["graph"]["nodes"], 139);  // 69 forward nodes
  // Parameters 11,699,112 floats; gradients and two Adam moments of the 11,689,512 trainable
  // ones; the input 4 x 3 x 224 x 224 floats.
  const int64_t expected = int64_t{11699112} * 4 + 3 * int64_t{11689512} * 4 +
                           int64_t{4} * 3 * 224 * 224 * 4;
  EXPECT_EQ(doc["fixed_memory_bytes"], expected);
  EXPECT_EQ(doc["budget_bytes"], (int64_t{16} << 30) - expected);
}

TEST(ImportCommandTest, GraphSourcesAreExclusive) {
  const auto both =
      RunRemat("solve --onnx " + Data("tiny_mlp.onnx") + " --model vgg16 --budget 1");
  EXPECT_EQ(both.exit_code, 2) << both.err;
  const auto zoo_option =
      RunRemat("solve --onnx " + Data("tiny_mlp.onnx") + " --resolution 32x32 --budget 1GiB");
  EXPECT_EQ(zoo_option.exit_code, 2) << zoo_option.err;
  EXPECT_NE(zoo_option.err.find("--resolution"), std::string::npos) << zoo_option.err;
  const auto bad_file =
      RunRemat("solve --onnx " + Data("unsupported_lstm.onnx") + " --budget 1GiB");
  EXPECT_EQ(bad_file.exit_code, 3) << bad_file.err;
}

// The importer's estimates are `portable` (docs/onnx.md, "Workspace"); `none` zeroes them and
// `cpu` does not apply.
TEST(ImportCommandTest, WorkspaceNoneZeroesTheEstimatesAndCpuIsRefused) {
  const auto dir = TempDir("import_workspace");
  auto import = [&](const std::string& name, const std::string& options) {
    const std::string out = (dir / (name + ".json")).string();
    const auto run = RunRemat("import " + Data("tiny_mlp.onnx") + " " + options + " --json -o " +
                              out);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(nlohmann::json::parse(run.out)["workspace"], name);
    return LoadGraphFile(out);
  };
  const Graph portable = import("portable", "");
  const Graph none = import("none", "--workspace none");
  ASSERT_EQ(none.size(), portable.size());
  int64_t portable_total = 0;
  for (int32_t v = 0; v < none.size(); ++v) {
    EXPECT_EQ(none.node(v).workspace_bytes, 0) << none.node(v).name;
    EXPECT_EQ(none.node(v).bytes, portable.node(v).bytes) << none.node(v).name;
    portable_total += portable.node(v).workspace_bytes;
  }
  EXPECT_GT(portable_total, 0);  // the Gemm weight gradients are fresh tensors
  const auto cpu = RunRemat("import " + Data("tiny_mlp.onnx") + " --workspace cpu -o " +
                            (dir / "cpu.json").string());
  EXPECT_EQ(cpu.exit_code, 2) << cpu.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "cpu.json"));
  EXPECT_EQ(RunRemat("solve --onnx " + Data("tiny_mlp.onnx") + " --workspace cpu --budget 100%")
                .exit_code,
            2);
  const auto solved = RunRemat("solve --onnx " + Data("tiny_mlp.onnx") +
                               " --workspace none --budget 100% --strategy checkpoint-all "
                               "--no-lower-bound --json");
  ASSERT_EQ(solved.exit_code, 0) << solved.err;
  EXPECT_EQ(nlohmann::json::parse(solved.out)["no_remat_peak_bytes"], NoRematPeakBytes(none));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace remat
