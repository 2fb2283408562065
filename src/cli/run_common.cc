// Model options and planning shared by the verbs of remat-run.
#include "cli/run_common.h"

#include <cstdio>

#include <fmt/format.h>

#include "core/sizes.h"
#include "planning/plan_report.h"

namespace remat {

namespace {

// The transformer runs at the zoo's width and depth (GPT-2 small: 12 blocks, hidden 768,
// 12 heads, vocabulary 50257) on one sequence of 128 tokens: about 30 s a step on one
// thread of a 2-core CPU, where 256 tokens take a minute (docs/exec.md).
constexpr int64_t kRunTransformerBatch = 1;
constexpr int64_t kRunTransformerSeqLength = 128;

}  // namespace

void AddRunModelOptions(CLI::App& command, RunModelArgs& args) {
  command.add_option("--model", args.zoo.model, "zoo model (see remat zoo list)")->required();
  AddModelSizeOptions(command, args.zoo,
                      fmt::format("{}; image models {} with {} classes; the transformer "
                                  "batch {} of {} tokens", kRunDefaultBatch,
                                  kRunDefaultResolution, kRunDefaultClasses,
                                  kRunTransformerBatch, kRunTransformerSeqLength));
  command.add_option("--threads", args.threads, "ATen intra-op threads (and CBC's when planning)")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxThreads));
  command.add_option("--seed", args.seed, "weights, input and labels seed")->capture_default_str();
}

ZooModelArgs WithRunDefaults(const ZooModelArgs& args) {
  ZooModelArgs sized = args;
  const ModelSpec* spec = FindModel(args.model);
  const bool transformer = spec != nullptr && spec->is_transformer;
  if (sized.batch == 0) sized.batch = transformer ? kRunTransformerBatch : kRunDefaultBatch;
  if (transformer) {
    if (sized.seq_length == 0) sized.seq_length = kRunTransformerSeqLength;
  } else if (spec != nullptr) {
    if (sized.resolution.empty()) sized.resolution = kRunDefaultResolution;
    if (sized.classes == 0) sized.classes = kRunDefaultClasses;
  }
  return sized;
}

BuiltModel BuildRunModel(const RunModelArgs& args) {
  const ZooModelArgs sized = WithRunDefaults(args.zoo);
  return BuildModel(sized.model, ToModelOptions(sized));
}

std::string RunStrategyName(const std::string& name) {
  if (name == "chen-sqrtn") return "chen-sqrtn-linear";
  if (name == "chen-greedy") return "chen-greedy-linear";
  return name;
}

std::optional<StrategyResult> PlanStrategy(const std::string& strategy, const Graph& graph,
                                           int64_t budget_bytes, const SolverSettings& settings) {
  const PlanReport report = PlanAtBudget(graph, Budget{.activation_bytes = budget_bytes},
                                         {.strategies = {RunStrategyName(strategy)},
                                          .settings = settings,
                                          .lower_bound = false});
  const StrategyRow& row = report.rows.front();
  if (!row.fits()) {
    std::string text = fmt::format("{} found no schedule within {}", strategy,
                                   FormatBytes(budget_bytes));
    if (!row.note.empty()) text += ": " + row.note;
    // Its schedule over the budget fits a larger one: the smallest that works, as far as known.
    if (row.result) {
      text += fmt::format("; the smallest budget for which remat found a schedule is {}",
                          FormatBytesApart(budget_bytes, row.result->peak_bytes).second);
    }
    fmt::print(stderr, "remat-run: {}\n", text);
    return std::nullopt;
  }
  return row.result;
}

}  // namespace remat
