// Loading the graph a command works on, and deriving its activation budget.
#include "cli/load_graph.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "cli/import_command.h"
#include "core/sizes.h"
#include "core/errors.h"
#include "core/cost_profile.h"
#include "core/graph_json.h"
#include "core/training_graph.h"
#include "model/devices.h"
#include "model/layers.h"

namespace remat {

std::string GraphSource::Describe() const {
  if (!graph_path.empty()) return graph_path;
  if (!onnx_path.empty()) return onnx_path;
  return zoo.batch > 0 ? fmt::format("{} (batch {})", zoo.model, zoo.batch) : zoo.model;
}

void AddGraphSourceOptions(CLI::App& command, GraphSource& source) {
  command.add_option("--graph", source.graph_path,
                     "graph file: remat JSON or node-link JSON (detected from the content)");
  command.add_option("--onnx", source.onnx_path,
                     "an ONNX model instead of --graph, imported as by remat import");
  command
      .add_option("--unknown-ops", source.unknown_ops,
                  "--onnx: operators without a cost rule: error (default) or zero-cost")
      ->check(CLI::IsMember({"error", "zero-cost"}));
  command.add_option("--model", source.zoo.model, "a zoo model instead of --graph (remat zoo list)");
  command.add_option("--costs", source.costs_path,
                     "per-node costs (milliseconds) and workspace measured by `remat-run profile` "
                     "instead of the graph's own");
  AddZooModelOptions(command, source.zoo);
  AddWorkspaceOption(command, source.zoo.workspace,
                     std::string(kZooWorkspaceDefault) +
                         "; --onnx portable; a --graph file its own (none zeroes them, cpu and "
                         "portable do not apply)");
}

namespace {

// The training graph of an imported or zoo model; an InputError (sizes beyond what remat
// represents) names the source as a file's errors do.
Graph TrainingGraphOf(const ForwardGraph& forward, const GraphSource& source) {
  try {
    return BuildTrainingGraph(forward);
  } catch (const InputError& error) {
    throw InputError(fmt::format("{}: {}", source.Describe(), error.what()));
  }
}

LoadedGraph LoadWithoutProfile(const GraphSource& source) {
  const bool file = !source.graph_path.empty();
  const bool onnx = !source.onnx_path.empty();
  const bool model = !source.zoo.model.empty();
  if (int(file) + int(onnx) + int(model) != 1) {
    throw UsageError(
        "give the graph with exactly one of --graph FILE, --onnx FILE or --model NAME");
  }
  if (file) {
    const std::optional<WorkspaceModel> workspace = ToWorkspaceModel(source.zoo);
    if (workspace && *workspace != WorkspaceModel::kNone) {
      throw UsageError(fmt::format(
          "--workspace {}: a graph file carries its own workspace estimates; with --graph only "
          "--workspace none applies (it zeroes them)",
          source.zoo.workspace));
    }
    Graph graph = LoadGraphFile(source.graph_path);
    if (workspace) graph = WithoutWorkspace(graph);
    return {std::move(graph), std::nullopt, std::nullopt};
  }
  if (onnx) {
    const ImportedOnnxModel imported = ImportOnnxFile(
        source.onnx_path, ToOnnxImportOptions(source.zoo, source.unknown_ops));
    return {TrainingGraphOf(imported.forward, source), std::nullopt,
            OnnxFixedMemory(imported, ToOptimizer(source.zoo))};
  }
  BuiltModel built = BuildModel(source.zoo.model, ToModelOptions(source.zoo));
  const FixedMemory fixed = ComputeFixedMemory(built.info, ToOptimizer(source.zoo));
  return {TrainingGraphOf(built.forward, source), std::move(built.info), fixed};
}

// "batch 2, classes 10, resolution 32x32" for a profile's recorded sizes.
std::string DescribeOptions(const std::map<std::string, std::string>& options) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : options) parts.push_back(name + " " + value);
  return fmt::format("{}", fmt::join(parts, ", "));
}

bool GivesNoSize(ZooModelArgs zoo) {
  for (const auto& [name, value] : IntegerSizeFields(zoo)) {
    if (*value != 0) return false;
  }
  return zoo.resolution.empty();
}

// The profile's recorded sizes as size options; InputError naming the file and field when one
// is not a size.
void TakeSizes(const CostProfile& profile, const std::string& path, ZooModelArgs& zoo) {
  const auto fields = IntegerSizeFields(zoo);
  for (const auto& [name, value] : profile.model_options) {
    const std::string field = fmt::format("{}: field 'model_options.{}'", path, name);
    if (name == "resolution") {
      try {
        ParseResolution(value);
      } catch (const UsageError&) {
        throw InputError(fmt::format("{}: '{}' is not HEIGHTxWIDTH", field, value));
      }
      zoo.resolution = value;
      continue;
    }
    const auto target = std::find_if(fields.begin(), fields.end(),
                                     [&](const auto& f) { return f.first == name; });
    if (target == fields.end()) throw InputError(fmt::format("{}: not a size option", field));
    if (value.empty() || value.size() > 9 ||
        value.find_first_not_of("0123456789") != std::string::npos || std::stoll(value) < 1) {
      throw InputError(fmt::format("{}: '{}' is not a positive integer", field, value));
    }
    *target->second = std::stoll(value);
  }
}

}  // namespace

LoadedGraph LoadGraphSource(const GraphSource& source) {
  // Every verb refuses an unknown --device, whether or not its graph or budget uses it.
  if (!source.zoo.device.empty()) DeviceByName(source.zoo.device);
  if (source.costs_path.empty()) return LoadWithoutProfile(source);
  const CostProfile profile = LoadCostProfile(source.costs_path);
  // A zoo model given without sizes is built at the sizes the profile was measured at, so
  // `remat-run profile --model M -o F && remat solve --model M --costs F` plans what ran.
  GraphSource sized = source;
  const bool zoo = !source.zoo.model.empty();
  if (zoo && profile.model == source.zoo.model && GivesNoSize(source.zoo)) {
    TakeSizes(profile, source.costs_path, sized.zoo);
  }
  LoadedGraph loaded = LoadWithoutProfile(sized);
  try {
    loaded.graph = ApplyCostProfile(loaded.graph, profile, source.costs_path);
  } catch (const InputError& error) {
    if (!zoo || !loaded.model) throw;
    // Name both sizes: the usual cause is a profile measured at other sizes.
    const ModelInfo& info = *loaded.model;
    throw InputError(fmt::format(
        "{}; the profile was measured on {} ({}), the graph is {} at batch {}, input {}, output "
        "{}",
        error.what(), profile.model,
        profile.model_options.empty() ? profile.settings : DescribeOptions(profile.model_options),
        info.model, info.batch, FormatShape(info.input_shape), FormatShape(info.output_shape)));
  }
  // No workspace means none measured either.
  if (ToWorkspaceModel(source.zoo) == WorkspaceModel::kNone) {
    loaded.graph = WithoutWorkspace(loaded.graph);
  }
  return loaded;
}

void AddBudgetOptions(CLI::App& command, BudgetArgs& args) {
  command.add_option("--budget", args.budget_text,
                     "activation budget: bytes, 16GiB, 512MB, 60% of the no-remat peak, or min "
                     "(the smallest budget remat finds a schedule for, with a lower bound on "
                     "every schedule's peak)");
  CLI::Option* memory =
      command.add_option("--memory", args.memory_text,
                         "device memory; the activation budget is this minus the fixed memory");
  // Without --memory nothing reads it: a usage error rather than an option silently ignored.
  command
      .add_option("--fixed-memory", args.fixed_text,
                  "fixed memory of a --graph file for --memory (default 0; zoo models "
                  "compute parameters, gradients, optimizer state and input)")
      ->needs(memory);
}

BudgetRequest ToBudgetRequest(const BudgetArgs& args, const GraphSource& source,
                             const LoadedGraph& loaded) {
  BudgetRequest request{.budget_text = args.budget_text, .memory_text = args.memory_text,
                        .fixed_text = args.fixed_text};
  if (!source.zoo.device.empty()) {
    request.device_memory_bytes = DeviceByName(source.zoo.device).memory_bytes;
  }
  if (loaded.fixed) request.model_fixed_bytes = loaded.fixed->total_bytes();
  return request;
}

}  // namespace remat
