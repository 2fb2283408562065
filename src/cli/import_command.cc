// remat import: reads an ONNX model, builds its training graph (docs/design.md §1) and writes it as a
// remat graph file, with a summary of what the importer made of the file's nodes.
#include "cli/import_command.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/output_paths.h"
#include "core/graph_json.h"
#include "core/sizes.h"
#include "core/training_graph.h"

namespace remat {
namespace {

struct ImportArgs {
  std::string model_path;
  ZooModelArgs sizing;  // --batch, --cost-model, --device, --optimizer, --workspace
  std::string unknown_ops = "error";
  std::string output_path;
  bool json = false;
};

std::string WithThousands(int64_t value) {
  std::string digits = std::to_string(value);
  const size_t first = value < 0 ? 1 : 0;
  for (size_t pos = digits.size(); pos > first + 3; pos -= 3) digits.insert(pos - 3, ",");
  return digits;
}

std::string DescribeBatch(const ImportedOnnxModel& model) {
  if (!model.exported_batch) return fmt::format("{} (symbolic in the file)", model.batch);
  if (*model.exported_batch == model.batch) return fmt::format("{} (as exported)", model.batch);
  return fmt::format("{} (exported at {}; sizes and FLOPs rescaled by {}/{})", model.batch,
                     *model.exported_batch, model.batch, *model.exported_batch);
}

// What the import made: the ONNX model read, its training graph and its fixed memory.
struct Imported {
  ImportedOnnxModel model;
  Graph graph;
  FixedMemory fixed;
  Optimizer optimizer;
  WorkspaceModel workspace;
  int32_t forward_nodes() const { return static_cast<int32_t>(model.forward.nodes.size()); }
};

nlohmann::json ImportJson(const ImportArgs& args, const Imported& in) {
  const ImportedOnnxModel& model = in.model;
  const Graph& graph = in.graph;
  const FixedMemory& fixed = in.fixed;
  return {
      {"schema", "remat.import/1"},
      {"file", args.model_path},
      {"output", args.output_path},
      {"graph", {{"name", graph.name()}, {"nodes", graph.size()},
                 {"edges", graph.edges().size()}, {"cost_unit", graph.cost_unit()},
                 {"total_cost", graph.total_cost()},
                 {"fingerprint", GraphFingerprint(graph)}}},
      {"batch", model.batch},
      {"workspace", WorkspaceOptionName(in.workspace)},
      {"exported_batch",
       model.exported_batch ? nlohmann::json(*model.exported_batch) : nlohmann::json(nullptr)},
      {"onnx", {{"ir_version", model.ir_version}, {"opset", model.opset},
                {"producer", model.producer}, {"nodes", model.onnx_nodes},
                {"forward_nodes", in.forward_nodes()}, {"folded_nodes", model.folded_nodes},
                {"alias_nodes", model.alias_nodes}, {"unused_nodes", model.unused_nodes},
                {"zero_cost_nodes", model.zero_cost_nodes}}},
      {"parameters", model.parameters},
      {"trainable_parameters", model.trainable_parameters},
      {"fixed_memory", {{"optimizer", OptimizerName(in.optimizer)},
                        {"parameter_bytes", fixed.parameter_bytes},
                        {"gradient_bytes", fixed.gradient_bytes},
                        {"optimizer_bytes", fixed.optimizer_bytes},
                        {"input_bytes", fixed.input_bytes},
                        {"total_bytes", fixed.total_bytes()}}}};
}

void PrintImportTable(const ImportArgs& args, const Imported& in) {
  const ImportedOnnxModel& model = in.model;
  const Graph& graph = in.graph;
  const FixedMemory& fixed = in.fixed;
  std::vector<std::vector<std::string>> rows = {
      {"graph", graph.name()},
      {"onnx nodes",
       fmt::format("{}: {} forward, {} folded (constants and shapes), {} aliases (Identity, eval "
                   "Dropout), {} unused",
                   model.onnx_nodes, in.forward_nodes(), model.folded_nodes, model.alias_nodes,
                   model.unused_nodes)},
      {"training graph", fmt::format("{} nodes, {} edges", graph.size(), graph.edges().size())},
      {"batch", DescribeBatch(model)},
      {"workspace", WorkspaceOptionName(in.workspace)},
      {"sum of costs", fmt::format("{:g} {}", graph.total_cost(), graph.cost_unit())},
      {"parameters", fmt::format("{} ({} trainable)", WithThousands(model.parameters),
                                 WithThousands(model.trainable_parameters))},
      {"fixed memory",
       fmt::format("{} ({} B) with {}: parameters {}, gradients {}, optimizer {}, input {}",
                   FormatBytes(fixed.total_bytes()), fixed.total_bytes(),
                   OptimizerName(in.optimizer), FormatBytes(fixed.parameter_bytes),
                   FormatBytes(fixed.gradient_bytes), FormatBytes(fixed.optimizer_bytes),
                   FormatBytes(fixed.input_bytes))}};
  for (const std::string& node : model.zero_cost_nodes) rows.push_back({"zero cost", node});
  fmt::print("{}", FormatTable({"wrote", args.output_path}, rows));
}

// Parses the options, imports and writes the graph, then prints what it made.
void RunImport(const ImportArgs& args) {
  CheckOutputPath("-o", args.output_path, {args.model_path});
  const OnnxImportOptions options = ToOnnxImportOptions(args.sizing, args.unknown_ops);
  const Optimizer optimizer = ToOptimizer(args.sizing);
  ImportedOnnxModel model = ImportOnnxFile(args.model_path, options);
  Graph graph = BuildTrainingGraph(model.forward);
  SaveGraphFile(graph, args.output_path);
  const FixedMemory fixed = OnnxFixedMemory(model, optimizer);
  const Imported imported{std::move(model), std::move(graph), fixed, optimizer,
                          options.workspace};
  if (args.json) {
    fmt::print("{}\n", ImportJson(args, imported).dump(2));
  } else {
    PrintImportTable(args, imported);
  }
}

}  // namespace

OnnxImportOptions ToOnnxImportOptions(const ZooModelArgs& args, const std::string& unknown_ops) {
  const auto zoo_only = [](const char* option) {
    throw UsageError(fmt::format("{} sizes zoo models; an ONNX model has its own sizes", option));
  };
  if (!args.resolution.empty()) zoo_only("--resolution");
  if (args.classes != 0) zoo_only("--classes");
  if (args.seq_length != 0) zoo_only("--seq-length");
  if (args.layers != 0) zoo_only("--layers");
  if (args.hidden != 0) zoo_only("--hidden");
  if (args.heads != 0) zoo_only("--heads");
  if (args.vocab != 0) zoo_only("--vocab");
  OnnxImportOptions options;
  if (args.batch != 0) options.batch = args.batch;
  const std::optional<UnknownOps> mode = ParseUnknownOps(unknown_ops);
  if (!mode) {
    throw UsageError(
        fmt::format("unknown --unknown-ops '{}'; choose error or zero-cost", unknown_ops));
  }
  options.unknown_ops = *mode;
  CostModelChoice choice = ToCostModelChoice(args);
  options.cost_model = choice.cost_model;
  options.device = std::move(choice.device);
  options.workspace = ToOnnxWorkspaceModel(args);
  return options;
}

WorkspaceModel ToOnnxWorkspaceModel(const ZooModelArgs& args) {
  const WorkspaceModel workspace = ToWorkspaceModel(args).value_or(WorkspaceModel::kPortable);
  if (workspace == WorkspaceModel::kLibtorchCpu) {
    throw UsageError("--workspace cpu: the ONNX importer knows no backend's kernels; its "
                     "estimates are portable (the default), or none");
  }
  return workspace;
}

void AddImportCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* import = app.add_subcommand(
      "import", "read an ONNX model and write its training graph as a remat graph file");
  import->add_option("model", args->model_path, "the .onnx file")->required();
  import->add_option("--batch", args->sizing.batch,
                     "batch size: sets a symbolic batch, rescales a fixed one (default: the "
                     "file's)")
      ->check(CLI::Range(1, 1000000));
  import
      ->add_option("--unknown-ops", args->unknown_ops,
                   "operators without a cost rule: error (default) or zero-cost")
      ->check(CLI::IsMember({"error", "zero-cost"}));
  import
      ->add_option("--cost-model", args->sizing.cost_model,
                   "node costs: flops (analytic FLOPs) or roofline (ms on --device)")
      ->check(CLI::IsMember({"flops", "roofline"}));
  import->add_option("--device", args->sizing.device,
                     "device preset for the roofline: v100-16gb, a100-40gb, a100-80gb, "
                     "h100-80gb, h200-141gb");
  import
      ->add_option("--optimizer", args->sizing.optimizer,
                   "optimizer state in the fixed-memory summary: sgd, momentum or adam")
      ->check(CLI::IsMember({"sgd", "momentum", "adam"}));
  AddWorkspaceOption(*import, args->sizing.workspace, "portable (cpu does not apply)");
  import->add_option("-o,--output", args->output_path, "output file (remat JSON)")
      ->check(kOutputPath)->required();
  import->add_flag("--json", args->json, "machine-readable summary (remat.import/1)");
  import->callback([args, &exit_code] {
    RunImport(*args);
    exit_code = kExitOk;
  });
}

}  // namespace remat
