// remat zoo list | export, and the zoo-model options other verbs accept in place of --graph.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/fixed_memory.h"
#include "zoo/registry.h"

namespace remat {

// Adds `zoo` with its subcommands `list` and `export`.
void AddZooCommands(CLI::App& app, int& exit_code);

// The command-line text that names and sizes a zoo model; zero or empty means "default".
struct ZooModelArgs {
  std::string model;
  int64_t batch = 0;
  std::string resolution;  // "HxW"
  int64_t classes = 0;
  int64_t seq_length = 0;
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t vocab = 0;
  std::string cost_model = "flops";
  std::string device;  // a preset name (memory for budgets, speeds for the roofline)
  std::string optimizer = "sgd";
  std::string workspace;  // "cpu" | "portable" | "none"; empty: portable with --device, cpu without
};

// The integer size options of `args` by name without dashes ("batch", "classes",
// "seq_length", "layers", "hidden", "heads", "vocab"), as cost profiles record them.
std::vector<std::pair<std::string, int64_t*>> IntegerSizeFields(ZooModelArgs& args);

// Adds the size options --batch, --resolution, --classes, --seq-length, --layers, --hidden,
// --heads and --vocab to `command` (remat and remat-run share them); `defaults` says in the
// help where the defaults come from.
void AddModelSizeOptions(CLI::App& command, ZooModelArgs& args, const std::string& defaults);

// The size options and --cost-model, --device and --optimizer. Not --model: the caller adds it as an
// option or a positional bound to args.model.
void AddZooModelOptions(CLI::App& command, ZooModelArgs& args);

// Adds --workspace cpu|portable|none bound to `workspace`; `default_text` says in the help what
// an absent option means (kZooWorkspaceDefault for zoo models).
void AddWorkspaceOption(CLI::App& command, std::string& workspace, const std::string& default_text);
inline constexpr const char* kZooWorkspaceDefault = "portable with --device, cpu without";

// The command-line names of the workspace models: "cpu", "portable", "none".
const char* WorkspaceOptionName(WorkspaceModel model);
// --workspace of `args`: empty when not given; UsageError for an unknown name.
std::optional<WorkspaceModel> ToWorkspaceModel(const ZooModelArgs& args);
// The model a zoo graph is built with: --workspace, or else kPortable with --device and
// kLibtorchCpu without (what ToModelOptions leaves to the zoo).
WorkspaceModel ChosenWorkspaceModel(const ZooModelArgs& args);

// "416x608" -> {416, 608}; UsageError on anything else.
Resolution ParseResolution(const std::string& text);

// --cost-model and --device of `args`, as zoo models and ONNX imports both take them:
// UsageError for an unknown cost model or roofline without --device; InputError for an
// unknown device.
struct CostModelChoice {
  CostModel cost_model = CostModel::kFlops;
  std::optional<DeviceSpec> device;
};
CostModelChoice ToCostModelChoice(const ZooModelArgs& args);

// The library options for `args`: UsageError for malformed text or options of the other kind
// of model (--resolution for the transformer), and as ToCostModelChoice and ToWorkspaceModel.
ModelOptions ToModelOptions(const ZooModelArgs& args);
// UsageError for an unknown optimizer name.
Optimizer ToOptimizer(const ZooModelArgs& args);

}  // namespace remat
