// The evaluation verbs (sweep, maxbatch, approx-report, plot schedule) run as the remat binary
// on tiny inputs: numbers worked out by hand, orderings that must hold, and plot files checked
// by their headers and the rows of the data beside them.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/run_remat.h"

namespace remat {
namespace {

using nlohmann::json;
using testing::RunRemat;
using testing::Slurp;

// CBC stops within this relative gap of the optimum (the default --gap), so "optimal" costs
// are compared with this much slack.
constexpr double kGap = 1e-4;

class EvaluationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string Linear8() {
    const std::string path = Path("l8.json");
    if (!std::filesystem::exists(path)) {
      EXPECT_EQ(RunRemat("graph linear 8 -o " + path).exit_code, 0);
    }
    return path;
  }
  std::filesystem::path dir_;
};

// Rows of data per block of a gnuplot data file: blocks are separated by two blank lines,
// comment lines start with '#'.
std::vector<int> DataRowsPerBlock(const std::string& path) {
  std::istringstream in(Slurp(path));
  std::vector<int> blocks = {0};
  std::string line;
  int blank_run = 0;
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (++blank_run == 2) blocks.push_back(0);
      continue;
    }
    blank_run = 0;
    if (line[0] != '#') ++blocks.back();
  }
  return blocks;
}

// Whitespace-separated fields of the first data row.
size_t FieldsOfFirstRow(const std::string& path) {
  std::istringstream in(Slurp(path));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string field;
    size_t count = 0;
    while (fields >> field) ++count;
    return count;
  }
  return 0;
}

// A complete SVG document: the XML prologue, an <svg> element and its closing tag.
void ExpectSvg(const std::string& path) {
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const std::string text = Slurp(path);
  ASSERT_GT(text.size(), 200u) << path;
  EXPECT_EQ(text.rfind("<?xml", 0), 0u) << path;
  EXPECT_NE(text.find("<svg"), std::string::npos) << path;
  EXPECT_NE(text.find("</svg>"), std::string::npos) << path;
}

// A complete PNG: the 8-byte signature first and the IEND chunk last.
void ExpectPng(const std::string& path) {
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const std::string bytes = Slurp(path);
  ASSERT_GT(bytes.size(), 100u) << path;
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << path;
  EXPECT_EQ(bytes.substr(bytes.size() - 8, 4), "IEND") << path;
}

// The plot's script sits beside it and reads the data file by name.
void ExpectScriptBeside(const std::string& stem) {
  const std::string script = Slurp(stem + ".gp");
  const std::string data_name = std::filesystem::path(stem + ".dat").filename().string();
  EXPECT_NE(script.find("datafile = '" + data_name + "'"), std::string::npos) << script;
}

std::optional<double> CostIfFits(const json& row) {
  if (row["status"] != "fits") return std::nullopt;
  return row["cost"].get<double>();
}

// --- sweep -----------------------------------------------------------------------------------

// A strategy that sweeps its own parameter and keeps the cheapest schedule that fits can only
// get cheaper as the budget grows: everything that fitted still fits. That holds for
// checkpoint-all (one fixed schedule), chen-greedy-* (segment budget swept), griewank (slots
// swept) and optimal (within CBC's relative gap). It does NOT hold for approx and
// approx-randomized (a different LP is rounded at each budget) nor is it asserted for the
// one-shot chen-sqrtn-* and griewank-logn, whose schedule does not depend on the budget.
const std::vector<std::string> kMonotone = {"checkpoint-all", "chen-greedy-ap",
                                            "chen-greedy-linear", "griewank", "optimal"};

void ExpectMonotoneAndOptimumBelowBaselines(const json& doc) {
  std::map<std::string, std::optional<double>> previous;  // cost at the previous fitting budget
  for (const json& point : doc["points"]) {
    const int64_t budget = point["budget_bytes"];
    std::map<std::string, json> rows;
    for (const json& row : point["results"]) rows[row["strategy"]] = row;
    for (const std::string& name : kMonotone) {
      if (!rows.count(name)) continue;
      const auto cost = CostIfFits(rows[name]);
      if (previous[name]) {
        ASSERT_TRUE(cost.has_value()) << name << " fitted a smaller budget but not " << budget;
        EXPECT_LE(*cost, *previous[name] * (1 + kGap)) << name << " at budget " << budget;
      }
      if (cost) previous[name] = cost;
    }
    // The optimum is never above a baseline that fits, and never below the LP bound.
    ASSERT_TRUE(rows.count("optimal"));
    const auto optimal = CostIfFits(rows["optimal"]);
    for (const auto& [name, row] : rows) {
      const auto cost = CostIfFits(row);
      if (!cost) continue;
      ASSERT_TRUE(optimal.has_value()) << name << " fits at " << budget << " but optimal does not";
      if (name.rfind("approx", 0) != 0 && name != "optimal") {
        EXPECT_LE(*optimal, *cost * (1 + kGap)) << "optimal above " << name << " at " << budget;
      }
      if (!point["lower_bound_cost"].is_null()) {
        const double bound = point["lower_bound_cost"];
        EXPECT_LE(bound, *cost * (1 + 1e-9)) << name << " below the LP bound at " << budget;
      }
    }
  }
}

TEST_F(EvaluationTest, SweepOfLinearEightHasHandComputedEndsAndIsMonotone) {
  // Every strategy but the two roundings (ApproxReport* covers those): 7 per budget.
  const auto run = RunRemat("sweep --graph " + Linear8() + " --points 8 --time-limit 20 --json " +
                            "--strategies checkpoint-all,chen-sqrtn-ap,chen-sqrtn-linear," +
                            "chen-greedy-ap,chen-greedy-linear,griewank-logn,griewank,optimal");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["schema"], "remat.sweep/2");
  // linear(8): 17 unit nodes; the no-remat peak is 10 B; a backward node with its two inputs
  // is the minimum peak, 3 B. Eight points from 3 to 10 are the whole bytes 3..10.
  EXPECT_EQ(doc["no_remat_cost"], 17.0);
  EXPECT_EQ(doc["no_remat_peak_bytes"], 10);
  EXPECT_EQ(doc["min_peak_lower_bound_bytes"], 3);
  ASSERT_EQ(doc["points"].size(), 8u);
  ASSERT_EQ(doc["strategies"].size(), 8u);
  for (size_t p = 0; p < 8; ++p) {
    const json& point = doc["points"][p];
    EXPECT_EQ(point["budget_bytes"], static_cast<int64_t>(3 + p));
    ASSERT_EQ(point["results"].size(), 8u);
    std::map<std::string, json> rows;
    for (const json& row : point["results"]) rows[row["strategy"]] = row;
    // checkpoint-all keeps everything: cost 17 everywhere, fits only at its own peak of 10 B.
    EXPECT_EQ(rows["checkpoint-all"]["cost"], 17.0);
    EXPECT_EQ(rows["checkpoint-all"]["status"], p + 3 >= 10 ? "fits" : "over_budget");
    // Chen sqrt(n) keeps 1, 3, 5, 7 and peaks at 6 B (docs/semantics.md).
    EXPECT_EQ(rows["chen-sqrtn-linear"]["status"], p + 3 >= 6 ? "fits" : "over_budget");
    EXPECT_EQ(rows["optimal"]["status"], "fits") << "budget " << p + 3;
  }
  // At 3 B only a backward node, its gradient input and the forward value it needs fit, so
  // every forward value i is recomputed from node 0 for bwd(i), i = 6..0 (bwd(7) finds 7 still
  // held from the loss stage): 7 + 6 + ... + 1 = 28 recomputations on top of 17.
  EXPECT_EQ(doc["points"][0]["results"][7]["strategy"], "optimal");
  EXPECT_NEAR(doc["points"][0]["results"][7]["cost"].get<double>(), 45.0, 45.0 * kGap);
  // At 10 B nothing needs recomputing.
  EXPECT_NEAR(doc["points"][7]["results"][7]["cost"].get<double>(), 17.0, 17.0 * kGap);
  EXPECT_TRUE(run.err.empty()) << "no progress line off a terminal: " << run.err;
  ExpectMonotoneAndOptimumBelowBaselines(doc);
}

TEST_F(EvaluationTest, SweepOfATinyVggIsMonotoneAndTheOptimumBeatsEveryBaseline) {
  // VGG16 at batch 1, 32x32: 45 nodes, small enough for CBC to prove optimality in seconds.
  const auto run = RunRemat(
      "sweep --model vgg16 --batch 1 --resolution 32x32 --points 2 --time-limit 30 --json "
      "--strategies checkpoint-all,chen-sqrtn-linear,chen-greedy-ap,chen-greedy-linear,"
      "griewank-logn,griewank,optimal");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  ASSERT_EQ(doc["points"].size(), 2u);  // the minimum-peak bound and the no-remat peak
  for (const json& point : doc["points"]) {
    for (const json& row : point["results"]) {
      if (row["strategy"] == "optimal") {
        EXPECT_EQ(row["solver_status"], "optimal");
      }
    }
  }
  ExpectMonotoneAndOptimumBelowBaselines(doc);
}

TEST_F(EvaluationTest, SweepCsvHasOneLinePerBudgetAndStrategy) {
  const auto run = RunRemat("sweep --graph " + Linear8() + " --points 2 --no-lower-bound --csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::istringstream in(run.out);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  // A header, then 2 budgets (3 and 10 B) x the twelve strategies of a training graph ('all').
  ASSERT_EQ(lines.size(), 1u + 2 * 12);
  EXPECT_EQ(lines[0].rfind("budget_bytes,budget_fraction_of_no_remat_peak,strategy,status", 0), 0u);
  // The second budget starts with checkpoint-all, which fits its own peak at overhead 1; the
  // lower bound was skipped, so the bound is the one optimal proved (17: no gap).
  EXPECT_EQ(lines[13].rfind("10,1,checkpoint-all,fits,,17,1,10,17,0,", 0), 0u) << lines[13];
  EXPECT_EQ(lines[24].rfind("10,1,optimal,fits,optimal,17,1,10,17,0,", 0), 0u) << lines[24];
}

TEST_F(EvaluationTest, SweepPlotsSvgAndPngWithOneDataRowPerBudget) {
  for (const std::string ext : {"svg", "png"}) {
    const std::string stem = Path("sweep_" + ext);
    const auto run = RunRemat("sweep --graph " + Linear8() +
                              " --points 4 --strategies checkpoint-all,griewank --plot " + stem +
                              "." + ext);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    if (ext == "svg") {
      ExpectSvg(stem + ".svg");
    } else {
      ExpectPng(stem + ".png");
    }
    EXPECT_EQ(DataRowsPerBlock(stem + ".dat"), std::vector<int>{4});
    // budget_bytes, budget in a unit, the LP bound and one column per strategy.
    EXPECT_EQ(FieldsOfFirstRow(stem + ".dat"), 3u + 2u);
    ExpectScriptBeside(stem);
  }
}

// Issue 24: every strategy of the registry in its own colour and marker (optimal used to be
// drawn exactly like chen-sqrtn-ap), and the bound line named by where the bound came from.
TEST_F(EvaluationTest, SweepPlotDrawsEachStrategyInItsOwnLookAndNamesTheBound) {
  const std::string stem = Path("looks");
  const auto run = RunRemat("sweep --graph " + Linear8() +
                            " --points 2 --time-limit 10 --quiet --plot " + stem + ".svg");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string script = Slurp(stem + ".gp");
  const std::regex series(
      "with linespoints lw \\S+ lc rgb '(#[0-9A-Fa-f]{6})' pt (\\d+) ps \\S+ title '([^']+)'");
  std::map<std::string, std::string> owner;  // "colour pt" -> strategy
  int strategies = 0;
  for (std::sregex_iterator it(script.begin(), script.end(), series), end; it != end; ++it) {
    ++strategies;
    const std::string look = (*it)[1].str() + " pt " + (*it)[2].str();
    EXPECT_TRUE(owner.emplace(look, (*it)[3].str()).second)
        << (*it)[3] << " is drawn like " << owner[look] << ": " << look;
  }
  EXPECT_EQ(strategies, 12) << script;  // linear(8) is a training graph: all of them apply
  EXPECT_TRUE(std::regex_search(
      script, std::regex("with lines lw 2 dt 2 lc rgb 'black' title 'lower bound \\((LP "
                         "relaxation|absence-gap)[^']*\\)'")))
      << script;
}

TEST_F(EvaluationTest, SweepRejectsAnEmptyRangeAndBothOutputFormats) {
  EXPECT_EQ(RunRemat("sweep --graph " + Linear8() + " --from 9 --to 5").exit_code, 2);
  EXPECT_EQ(RunRemat("sweep --graph " + Linear8() + " --json --csv").exit_code, 2);
  EXPECT_EQ(RunRemat("sweep --graph " + Linear8() + " --plot out.pdf").exit_code, 2);
}

// --- maxbatch --------------------------------------------------------------------------------

struct TinyVggSizes {
  int64_t peak_bytes = 0;   // no-remat activation peak
  int64_t fixed_bytes = 0;  // parameters, gradients, optimizer state and the input
  int64_t needed_bytes() const { return peak_bytes + fixed_bytes; }
};

// VGG16 at 32x32 and the given batch, as `solve` sizes it.
TinyVggSizes MeasureTinyVgg(const std::string& optimizer, int batch) {
  const auto run = RunRemat("solve --model vgg16 --batch " + std::to_string(batch) +
                            " --resolution 32x32 --memory 1GB --strategy checkpoint-all "
                            "--no-lower-bound --json --optimizer " + optimizer);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  return {doc["no_remat_peak_bytes"], doc["fixed_memory_bytes"]};
}

// Runs maxbatch on VGG16 at 32x32 with a memory half-way between what checkpoint-all needs at
// 5 and at 6 samples (each measured by `solve` at that batch), so exactly 5 fit; returns the
// document. (The peak is not linear in the batch: a convolution's workspace holds copies of
// its weights, docs/zoo.md.)
json MaxBatchAtFiveSamples(const std::string& optimizer, const std::string& strategies) {
  const TinyVggSizes five = MeasureTinyVgg(optimizer, 5);
  const TinyVggSizes six = MeasureTinyVgg(optimizer, 6);
  EXPECT_LT(five.needed_bytes(), six.needed_bytes());
  const int64_t memory = (five.needed_bytes() + six.needed_bytes()) / 2;
  const auto run = RunRemat("maxbatch --model vgg16 --resolution 32x32 --memory " +
                            std::to_string(memory) + " --optimizer " + optimizer +
                            " --strategies " + strategies + " --time-limit 30 --json");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["schema"], "remat.maxbatch/1");
  EXPECT_EQ(doc["optimizer"], optimizer);
  // The default cap is one extra forward pass: (3F + F) / 3F = 4/3 when the backward pass
  // costs twice the forward.
  EXPECT_NEAR(doc["overhead_cap"].get<double>(), 4.0 / 3.0, 1e-3);
  const json& all = doc["results"][0];
  EXPECT_EQ(all["strategy"], "checkpoint-all");
  EXPECT_EQ(all["max_batch"], 5);
  EXPECT_EQ(all["ratio_vs_checkpoint_all"], 1.0);
  EXPECT_EQ(all["at_max"]["activation_budget_bytes"], memory - five.fixed_bytes);
  EXPECT_EQ(all["at_max"]["peak_bytes"], five.peak_bytes);
  EXPECT_EQ(all["next_batch"]["batch"], 6);
  return doc;
}

TEST_F(EvaluationTest, MaxBatchWithSgdMatchesTheClosedFormAndTheOptimumIsCertified) {
  const json doc = MaxBatchAtFiveSamples("sgd", "checkpoint-all,griewank,optimal");
  ASSERT_EQ(doc["results"].size(), 3u);
  // The optimum fits whatever a baseline fits; on this small graph the batch above its
  // largest is proven infeasible (by the minimum peak, the LP or CBC), so it is certified.
  const json& optimal = doc["results"][2];
  EXPECT_EQ(optimal["strategy"], "optimal");
  EXPECT_GE(optimal["max_batch"].get<int64_t>(), doc["results"][1]["max_batch"].get<int64_t>());
  EXPECT_GE(optimal["max_batch"].get<int64_t>(), 5);
  EXPECT_EQ(optimal["certified"], true);
  EXPECT_LE(optimal["at_max"]["peak_bytes"].get<int64_t>(),
            optimal["at_max"]["activation_budget_bytes"].get<int64_t>());
  EXPECT_LE(optimal["at_max"]["overhead"].get<double>(), 4.0 / 3.0 + 1e-9);
  EXPECT_DOUBLE_EQ(optimal["ratio_vs_checkpoint_all"].get<double>(),
                   optimal["max_batch"].get<double>() / 5.0);
}

TEST_F(EvaluationTest, MaxBatchWithAdamMatchesTheClosedFormWithItsLargerFixedMemory) {
  // Adam's two moments add 8 bytes per trainable parameter to the weights; the memory is
  // chosen from Adam's own fixed memory, so checkpoint-all again fits exactly 5 samples.
  const json doc = MaxBatchAtFiveSamples("adam", "checkpoint-all,griewank");
  ASSERT_EQ(doc["results"].size(), 2u);
  EXPECT_TRUE(doc["results"][1]["certified"].is_null()) << "certification is for optimal only";
}

TEST_F(EvaluationTest, MaxBatchPlotsOneBarPerStrategyAsSvgAndPng) {
  for (const std::string ext : {"svg", "png"}) {
    const std::string stem = Path("maxbatch_" + ext);
    const auto run = RunRemat(
        "maxbatch --model vgg16 --resolution 32x32 --memory 400MB --strategies "
        "checkpoint-all,chen-sqrtn-linear,griewank-logn,griewank --plot " + stem + "." + ext);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    if (ext == "svg") {
      ExpectSvg(stem + ".svg");
    } else {
      ExpectPng(stem + ".png");
    }
    EXPECT_EQ(DataRowsPerBlock(stem + ".dat"), std::vector<int>{4});
    // index, strategy, max batch, best uncertified batch, ratio to checkpoint-all.
    EXPECT_EQ(FieldsOfFirstRow(stem + ".dat"), 5u);
    ExpectScriptBeside(stem);
  }
}

// Issue 23: `--workspace none` is the paper's accounting, node outputs only. Every batch's
// peak is then at most the default's (cpu: no device), so the largest batch is at least as
// large; on VGG19 at 224x224 it is larger, since the default counts the convolutions' oneDNN
// copies (203 samples against 151, docs/BENCHMARKS.md, "The paper's networks: costs,
// gaps and bounds").
TEST_F(EvaluationTest, MaxBatchWithoutWorkspaceFitsMoreThanTheDefault) {
  const std::string command = "maxbatch --model vgg19 --memory 16GB --optimizer adam "
                              "--strategies checkpoint-all --json --quiet";
  const auto none = RunRemat(command + " --workspace none");
  const auto by_default = RunRemat(command);
  ASSERT_EQ(none.exit_code, 0) << none.err;
  ASSERT_EQ(by_default.exit_code, 0) << by_default.err;
  const json none_doc = json::parse(none.out);
  const json default_doc = json::parse(by_default.out);
  EXPECT_EQ(none_doc["workspace"], "none");
  EXPECT_EQ(default_doc["workspace"], "cpu");
  const int64_t none_batch = none_doc["results"][0]["max_batch"];
  const int64_t default_batch = default_doc["results"][0]["max_batch"];
  EXPECT_GT(default_batch, 0);
  EXPECT_GT(none_batch, default_batch);
  // Output bytes alone: batch 204 peaks at 12.66 GiB against the 12.65 GiB left after Adam's
  // fixed memory.
  EXPECT_EQ(none_batch, 203);
}

TEST_F(EvaluationTest, MaxBatchRejectsAFixedBatchAndAPercentMemory) {
  EXPECT_EQ(RunRemat("maxbatch --model vgg16 --batch 4 --memory 16GB").exit_code, 2);
  EXPECT_EQ(RunRemat("maxbatch --model vgg16 --memory 50%").exit_code, 2);
  EXPECT_EQ(RunRemat("maxbatch --model vgg16").exit_code, 2);  // no memory
  EXPECT_EQ(RunRemat("maxbatch --model nope --memory 16GB").exit_code, 3);
}

TEST_F(EvaluationTest, MaxBatchIsZeroWhenTheWeightsAloneFillTheDevice) {
  // At 32x32 VGG16's first dense layer reads 512 values instead of 25,088, leaving about 37.7
  // M float32 parameters: with their gradients about 301.6 MB, more than a 250 MB device.
  const std::string stem = Path("zero");
  const auto run = RunRemat("maxbatch --model vgg16 --resolution 32x32 --memory 250MB "
                            "--strategies checkpoint-all --json --plot " + stem + ".svg");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["results"][0]["max_batch"], 0);
  EXPECT_TRUE(doc["results"][0]["ratio_vs_checkpoint_all"].is_null());
  // Issue 24: the empty bar says why, rising from the axis where the bar would be.
  ExpectSvg(stem + ".svg");
  const std::string script = Slurp(stem + ".gp");
  EXPECT_TRUE(std::regex_search(script, std::regex("set label 1 'batch 1: the fixed memory "
                                                   "[^']+ fills the device' at first 0, first 0 "
                                                   "rotate by 90")))
      << script;
}

// --- approx-report ---------------------------------------------------------------------------

TEST_F(EvaluationTest, ApproxReportOrdersBoundOptimumAndRoundings) {
  const std::string stem = Path("approx");
  const auto run = RunRemat("approx-report --graph " + Linear8() +
                            " --points 4 --time-limit 20 --json --plot " + stem + ".svg");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json doc = json::parse(run.out);
  EXPECT_EQ(doc["schema"], "remat.approx-report/2");
  ASSERT_EQ(doc["points"].size(), 4u);
  const std::vector<int64_t> budgets = {3, 5, 7, 10};  // 3 + floor(7 i / 3)
  for (size_t p = 0; p < 4; ++p) {
    const json& point = doc["points"][p];
    EXPECT_EQ(point["budget_bytes"], budgets[p]);
    const auto optimal = CostIfFits(point["optimal"]);
    ASSERT_TRUE(optimal.has_value()) << "budget " << budgets[p];
    const double bound = point["lower_bound_cost"];
    EXPECT_LE(bound, *optimal * (1 + 1e-9));
    for (const char* rounding : {"deterministic", "randomized"}) {
      const auto cost = CostIfFits(point[rounding]);
      if (!cost) continue;
      EXPECT_LE(*optimal, *cost * (1 + kGap)) << rounding << " at " << budgets[p];
      const std::string key = std::string(rounding) + "_over_optimal";
      EXPECT_NEAR(point[key].get<double>(), *cost / *optimal, 1e-12);
    }
  }
  // The hand-computed ends: 45 at 3 B, 17 at 10 B (see the sweep test).
  EXPECT_NEAR(doc["points"][0]["optimal"]["cost"].get<double>(), 45.0, 45.0 * kGap);
  EXPECT_NEAR(doc["points"][3]["optimal"]["cost"].get<double>(), 17.0, 17.0 * kGap);
  ExpectSvg(stem + ".svg");
  EXPECT_EQ(DataRowsPerBlock(stem + ".dat"), std::vector<int>{4});
  // budget_bytes, budget in a unit, LP, optimal, deterministic, randomized and two ratios.
  EXPECT_EQ(FieldsOfFirstRow(stem + ".dat"), 8u);
  ExpectScriptBeside(stem);
}

TEST_F(EvaluationTest, ApproxReportPlotsPng) {
  const std::string stem = Path("approx");
  const auto run = RunRemat("approx-report --graph " + Linear8() + " --points 2 --plot " +
                            stem + ".png");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ExpectPng(stem + ".png");
  EXPECT_EQ(DataRowsPerBlock(stem + ".dat"), std::vector<int>{2});
  EXPECT_NE(run.out.find("det/opt"), std::string::npos) << run.out;
}

// --- plot schedule ---------------------------------------------------------------------------

TEST_F(EvaluationTest, PlotScheduleDrawsRSAndMemoryWithTheRightRows) {
  ASSERT_EQ(RunRemat("solve --graph " + Linear8() + " --budget 7 --strategy chen-sqrtn-linear -o " +
                     Path("s.json"))
                .exit_code,
            0);
  // Chen sqrt(n) on linear(8) keeps 1, 3, 5, 7 (docs/semantics.md). R: the 17 first
  // computations on the diagonal plus one recomputation of each of 0, 2, 4, 6 = 21 cells.
  // S (docs/semantics.md, "S from a checkpoint set"): a dropped forward value is held one
  // stage (0, 2, 4, 6: 4 cells); a kept one until its gradient bwd(i) = 16 - i (1: stages
  // 2..15 = 14, 3: 4..13 = 10, 5: 6..11 = 6, 7: 8..9 = 2); the loss and bwd nodes 9..15 one
  // stage each (8 cells); 4 + 32 + 8 = 44. Memory: each of the 21 evaluations allocates,
  // computes and (by the end of the step) frees its value: 63 operations.
  const json schedule = json::parse(Slurp(Path("s.json")));
  int held = 0;
  for (const json& node : schedule["S"]) {
    for (const json& interval : node) held += interval[1].get<int>() - interval[0].get<int>() + 1;
  }
  ASSERT_EQ(held, 44);
  for (const std::string ext : {"svg", "png"}) {
    const std::string stem = Path("schedule_" + ext);
    const auto run = RunRemat("plot schedule " + Path("s.json") + " -o " + stem + "." + ext);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    if (ext == "svg") {
      ExpectSvg(stem + ".svg");
    } else {
      ExpectPng(stem + ".png");
    }
    EXPECT_EQ(DataRowsPerBlock(stem + ".dat"), (std::vector<int>{21, 44, 63}));
    EXPECT_NE(run.out.find("R: 17 computed, 4 recomputed; S: 44 held"), std::string::npos)
        << run.out;
    ExpectScriptBeside(stem);
  }
  const std::string svg = Slurp(Path("schedule_svg.svg"));
  EXPECT_NE(svg.find("budget 7 B"), std::string::npos) << "the budget line is in the legend";
}

TEST_F(EvaluationTest, PlotWithoutGnuplotFailsCleanlyAndLeavesNoFile) {
  ASSERT_EQ(RunRemat("solve --graph " + Linear8() + " --budget 100% --strategy checkpoint-all -o " +
                     Path("s.json"))
                .exit_code,
            0);
  const auto before = std::distance(std::filesystem::directory_iterator(dir_),
                                    std::filesystem::directory_iterator());
  // An empty PATH hides gnuplot. RunRemat runs "remat ARGS" in a shell, so the arguments
  // start a second command line whose PATH has no gnuplot (the binary is named in full).
  const auto missing = RunRemat("--version >/dev/null; PATH=/nonexistent " REMAT_BINARY
                                " plot schedule " + Path("s.json") + " -o " + Path("out.svg"));
  EXPECT_EQ(missing.exit_code, 3) << missing.err;
  EXPECT_NE(missing.err.find("gnuplot"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("gnuplot-nox"), std::string::npos) << missing.err;
  const auto after = std::distance(std::filesystem::directory_iterator(dir_),
                                   std::filesystem::directory_iterator());
  EXPECT_EQ(after, before) << "no image, data, script or temporary file is left";
  EXPECT_FALSE(std::filesystem::exists(Path("out.svg")));
}

TEST_F(EvaluationTest, FailingGnuplotLeavesNoPartialFile) {
  ASSERT_EQ(RunRemat("solve --graph " + Linear8() + " --budget 100% --strategy checkpoint-all -o " +
                     Path("s.json"))
                .exit_code,
            0);
  // A stand-in gnuplot that fails after writing half an image where it was told to.
  const std::filesystem::path bin = dir_ / "bin";
  std::filesystem::create_directories(bin);
  {
    std::ofstream fake(bin / "gnuplot");
    fake << "#!/bin/sh\necho partial > \"$(ls -a | grep '^\\..*svg\\.tmp' | head -n 1)\"\n"
            "echo 'gnuplot: boom' >&2\nexit 1\n";
  }
  std::filesystem::permissions(bin / "gnuplot", std::filesystem::perms::owner_all);
  const auto before = std::distance(std::filesystem::directory_iterator(dir_),
                                    std::filesystem::directory_iterator());
  const auto run = RunRemat("--version >/dev/null; PATH=" + bin.string() + ":/usr/bin:/bin " +
                            REMAT_BINARY + " plot schedule " + Path("s.json") + " -o " +
                            Path("out.svg"));
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("gnuplot failed (exit 1)"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("boom"), std::string::npos) << run.err;
  const auto after = std::distance(std::filesystem::directory_iterator(dir_),
                                   std::filesystem::directory_iterator());
  EXPECT_EQ(after, before) << "the temporary image, data and script are removed";
}

TEST_F(EvaluationTest, PlotScheduleRejectsAnUnknownImageType) {
  ASSERT_EQ(RunRemat("solve --graph " + Linear8() + " --budget 100% --strategy checkpoint-all -o " +
                     Path("s.json"))
                .exit_code,
            0);
  const auto run = RunRemat("plot schedule " + Path("s.json") + " -o " + Path("out.jpg"));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find(".svg or .png"), std::string::npos) << run.err;
}

// Issue 14, defect 7: --total-time-limit bounds the whole maxbatch command; when it runs
// out, the search says so and never claims a certificate it did not finish.
TEST_F(EvaluationTest, MaxBatchTotalTimeLimitStopsTheSearchHonestly) {
  const auto run = RunRemat("maxbatch --model vgg16 --resolution 32x32 --memory 16e9 "
                            "--strategies checkpoint-all,optimal --total-time-limit 0.001 --json");
  // Exit 1 when the limit ran out before any batch was found (likely on a slow build): the
  // usual meaning of 1, and the JSON still says why.
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.err;
  const json doc = json::parse(run.out);
  bool stopped = false;
  for (const json& row : doc["results"]) {
    stopped |= row["stopped_at_total_limit"].get<bool>();
    if (row["strategy"] == "optimal") {
      EXPECT_NE(row["certified"], true) << row.dump();
    }
  }
  EXPECT_TRUE(stopped);
}

// Issue 14, defect 7: --total-time-limit bounds the whole sweep; rows after it is spent are
// marked skipped, never run past it.
TEST_F(EvaluationTest, SweepTotalTimeLimitSkipsWhatIsLeft) {
  const auto run = RunRemat("sweep --graph " + Linear8() +
                            " --points 3 --total-time-limit 0.001 --json");
  // Exit 1 when nothing that ran found a schedule: the usual meaning, even when cut short.
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.err;
  const json doc = json::parse(run.out);
  int skipped = 0;
  for (const json& point : doc["points"]) {
    for (const json& row : point["results"]) {
      if (row.contains("solver_status") && row["solver_status"] == "skipped") ++skipped;
    }
  }
  EXPECT_GT(skipped, 0) << run.out.substr(0, 500);
}

}  // namespace
}  // namespace remat
