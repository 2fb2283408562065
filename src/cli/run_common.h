// What the verbs of remat-run share: the model options (remat's own, with defaults small
// enough to execute on a CPU) and planning a strategy with remat's strategy runner.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/zoo_commands.h"
#include "core/graph.h"
#include "planning/strategy_runner.h"
#include "zoo/registry.h"

namespace remat {

// remat-run executes what it plans, so an unsized model gets batch 2 and, for an image model,
// a 32x32 input and 10 classes. A cost profile records the sizes it was measured at, and
// `remat solve --costs` builds the model at those sizes (docs/cli.md).
inline constexpr int64_t kRunDefaultBatch = 2;
inline constexpr const char* kRunDefaultResolution = "32x32";
inline constexpr int64_t kRunDefaultClasses = 10;

struct RunModelArgs {
  ZooModelArgs zoo;
  int32_t threads = 1;  // ATen intra-op threads (and CBC's when a verb plans)
  uint64_t seed = 7;    // weights, input and labels
};

// --model (required), remat's size options, --threads and --seed.
void AddRunModelOptions(CLI::App& command, RunModelArgs& args);

// The model's sizes with remat-run's defaults filled in (every size option set).
ZooModelArgs WithRunDefaults(const ZooModelArgs& args);

// BuildModel at WithRunDefaults(args.zoo).
BuiltModel BuildRunModel(const RunModelArgs& args);

// The short names remat-run has always taken ("chen-sqrtn"), beside every name of remat solve.
std::string RunStrategyName(const std::string& name);

// A simulated schedule within the budget, or nullopt with the reason on stderr.
std::optional<StrategyResult> PlanStrategy(const std::string& strategy, const Graph& graph,
                                           int64_t budget_bytes, const SolverSettings& settings);

}  // namespace remat
