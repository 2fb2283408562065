// Loading the graph a command works on, and deriving its activation budget.
#include "cli/load_graph.h"

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/import_command.h"
#include "core/sizes.h"
#include "core/errors.h"
#include "core/cost_profile.h"
#include "core/graph_json.h"
#include "core/training_graph.h"
#include "zoo/devices.h"

namespace remat {
namespace {

int64_t ParseBytes(const std::string& text, const std::string& option, int64_t reference) {
  try {
    return ResolveSize(ParseSize(text), reference);
  } catch (const std::invalid_argument& error) {
    throw UsageError(fmt::format("{}: {}", option, error.what()));
  }
}

}  // namespace

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
                     "per-node costs measured by `remat-run profile` (milliseconds) instead of "
                     "the graph's own costs");
  AddZooModelOptions(command, source.zoo);
}

namespace {

LoadedGraph LoadWithoutProfile(const GraphSource& source) {
  const bool file = !source.graph_path.empty();
  const bool onnx = !source.onnx_path.empty();
  const bool model = !source.zoo.model.empty();
  if (int(file) + int(onnx) + int(model) != 1) {
    throw UsageError(
        "give the graph with exactly one of --graph FILE, --onnx FILE or --model NAME");
  }
  if (file) return {LoadGraphFile(source.graph_path), std::nullopt, std::nullopt};
  if (onnx) {
    const ImportedOnnxModel imported = ImportOnnxFile(
        source.onnx_path, ToOnnxImportOptions(source.zoo, source.unknown_ops));
    return {BuildTrainingGraph(imported.forward), std::nullopt,
            OnnxFixedMemory(imported, ToOptimizer(source.zoo))};
  }
  BuiltModel built = BuildModel(source.zoo.model, ToModelOptions(source.zoo));
  const FixedMemory fixed = ComputeFixedMemory(built.info, ToOptimizer(source.zoo));
  return {BuildTrainingGraph(built.forward), std::move(built.info), fixed};
}

}  // namespace

LoadedGraph LoadGraphSource(const GraphSource& source) {
  LoadedGraph loaded = LoadWithoutProfile(source);
  if (!source.costs_path.empty()) {
    loaded.graph = ApplyCostProfile(loaded.graph, source.costs_path);
  }
  return loaded;
}

std::string Budget::Describe() const {
  if (!device_bytes) return fmt::format("{} ({} B)", FormatBytes(activation_bytes), activation_bytes);
  return fmt::format("{} ({} B) = device {} - fixed {}", FormatBytes(activation_bytes),
                     activation_bytes, FormatBytes(*device_bytes), FormatBytes(fixed_bytes));
}

void AddBudgetOptions(CLI::App& command, BudgetArgs& args) {
  command.add_option("--budget", args.budget_text,
                     "activation budget: bytes, 16GiB, 512MB, or 60% of the no-remat peak");
  command.add_option("--memory", args.memory_text,
                     "device memory; the activation budget is this minus the fixed memory");
  command.add_option("--fixed-memory", args.fixed_text,
                     "fixed memory of a --graph file for --memory (default 0; zoo models "
                     "compute parameters, gradients, optimizer state and input)");
}

Budget ResolveBudget(const BudgetArgs& args, const GraphSource& source,
                     const LoadedGraph& loaded, int64_t no_remat_peak_bytes) {
  const bool has_budget = !args.budget_text.empty();
  const bool has_memory = !args.memory_text.empty();
  if (has_budget && has_memory) throw UsageError("give either --budget or --memory, not both");
  Budget budget;
  if (has_budget) {
    budget.activation_bytes = ParseBytes(args.budget_text, "--budget", no_remat_peak_bytes);
    return budget;
  }
  int64_t device_bytes = 0;
  if (has_memory) {
    device_bytes = ParseBytes(args.memory_text, "--memory", no_remat_peak_bytes);
  } else if (!source.zoo.device.empty()) {
    device_bytes = DeviceByName(source.zoo.device).memory_bytes;
  } else {
    throw UsageError("give the memory limit with --budget SIZE, --memory SIZE or --device NAME");
  }
  if (loaded.fixed) {
    if (!args.fixed_text.empty()) {
      throw UsageError(
          "--fixed-memory is for graph files; zoo and ONNX models compute their own");
    }
    budget.fixed_bytes = loaded.fixed->total_bytes();
  } else if (!args.fixed_text.empty()) {
    budget.fixed_bytes = ParseBytes(args.fixed_text, "--fixed-memory", no_remat_peak_bytes);
  }
  budget.device_bytes = device_bytes;
  budget.activation_bytes = device_bytes - budget.fixed_bytes;
  if (budget.activation_bytes <= 0) {
    throw InputError(fmt::format("the fixed memory {} ({} B) alone exceeds the device memory {} "
                                 "({} B): no activation budget is left",
                                 FormatBytes(budget.fixed_bytes), budget.fixed_bytes,
                                 FormatBytes(device_bytes), device_bytes));
  }
  return budget;
}

}  // namespace remat
