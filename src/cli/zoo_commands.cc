// remat zoo list | export: the model zoo's networks, their sizes, and their graphs as files.
#include "cli/zoo_commands.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "cli/commands.h"
#include "cli/output_paths.h"
#include "cli/output.h"
#include "core/sizes.h"
#include "core/graph_json.h"
#include "core/training_graph.h"

namespace remat {
namespace {

// 138357544 -> "138,357,544".
std::string WithThousands(int64_t value) {
  std::string digits = std::to_string(value);
  const size_t first = value < 0 ? 1 : 0;
  for (size_t pos = digits.size(); pos > first + 3; pos -= 3) digits.insert(pos - 3, ",");
  return digits;
}

// The input of one sample: "224x224x3" or "seq 1024".
std::string DescribeSample(const ModelSpec& spec, const ModelInfo& info) {
  if (spec.is_transformer) return fmt::format("seq {}", info.input_shape[1]);
  return FormatShape(Shape(info.input_shape.begin() + 1, info.input_shape.end()));
}

void PrintList(bool as_json) {
  nlohmann::json models = nlohmann::json::array();
  std::vector<std::vector<std::string>> rows;
  for (const ModelSpec& spec : ZooModels()) {
    const BuiltModel built = BuildModel(spec.name);
    const Graph graph = BuildTrainingGraph(built.forward);
    const ModelInfo& info = built.info;
    nlohmann::json entry = {{"name", spec.name},
                            {"description", spec.description},
                            {"parameters", info.parameters},
                            {"trainable_parameters", info.trainable_parameters},
                            {"default_batch", spec.default_batch},
                            {"input_shape", info.input_shape},
                            {"input_bytes", info.input_bytes},
                            {"forward_flops", info.forward_flops},
                            {"training_nodes", graph.size()},
                            {"training_edges", graph.edges().size()}};
    if (spec.is_transformer) {
      const TransformerConfig& t = spec.default_transformer;
      entry["default_transformer"] = {{"layers", t.layers},
                                      {"hidden", t.hidden},
                                      {"heads", t.heads},
                                      {"seq_length", t.seq_length},
                                      {"vocab", t.vocab}};
    } else {
      entry["default_resolution"] = {{"height", spec.default_resolution.height},
                                     {"width", spec.default_resolution.width}};
      entry["default_classes"] = spec.default_classes;
    }
    models.push_back(entry);
    rows.push_back({spec.name, WithThousands(info.parameters), std::to_string(spec.default_batch),
                    DescribeSample(spec, info),
                    fmt::format("{}/{}", graph.size(), graph.edges().size()), spec.description});
  }
  nlohmann::json devices = nlohmann::json::array();
  std::vector<std::vector<std::string>> device_rows;
  for (const DeviceSpec& device : DevicePresets()) {
    devices.push_back({{"name", device.name},
                       {"description", device.description},
                       {"memory_bytes", device.memory_bytes},
                       {"peak_flops_per_s", device.peak_flops_per_s},
                       {"bandwidth_bytes_per_s", device.bandwidth_bytes_per_s}});
    device_rows.push_back({device.name, FormatBytes(device.memory_bytes),
                           fmt::format("{:g} TFLOP/s", device.peak_flops_per_s / 1e12),
                           fmt::format("{:g} GB/s", device.bandwidth_bytes_per_s / 1e9),
                           device.description});
  }
  if (as_json) {
    const nlohmann::json doc = {
        {"schema", "remat.zoo-list/1"}, {"models", models}, {"devices", devices}};
    fmt::print("{}\n", doc.dump(2));
    return;
  }
  fmt::print(
      "{}",
      FormatTable({"model", "parameters", "batch", "input", "nodes/edges", "description"}, rows));
  fmt::print("\n{}", FormatTable({"device", "memory", "peak FP32", "bandwidth", "description"},
                                 device_rows));
}

void RunExport(const ZooModelArgs& args, const std::string& output_path) {
  CheckOutputPath("-o", output_path, {});
  const ModelOptions options = ToModelOptions(args);
  const Optimizer optimizer = ToOptimizer(args);
  const BuiltModel built = BuildModel(args.model, options);
  const Graph graph = BuildTrainingGraph(built.forward);
  SaveGraphFile(graph, output_path);
  const FixedMemory fixed = ComputeFixedMemory(built.info, optimizer);
  auto bytes = [](int64_t b) { return fmt::format("{} ({} B)", FormatBytes(b), b); };
  std::vector<std::vector<std::string>> rows = {
      {"graph", graph.name()},
      {"nodes", fmt::format("{} ({} forward layers)", graph.size(), built.forward.nodes.size())},
      {"edges", std::to_string(graph.edges().size())},
      {"sum of costs", fmt::format("{:g} {}", graph.total_cost(), graph.cost_unit())},
      {"workspace", WorkspaceOptionName(ChosenWorkspaceModel(args))},
      {"parameters", fmt::format("{} ({} trainable)", WithThousands(built.info.parameters),
                                 WithThousands(built.info.trainable_parameters))},
      {"fixed memory",
       fmt::format("{} with {}: parameters {}, gradients {}, optimizer {}, "
                   "input {}",
                   bytes(fixed.total_bytes()), OptimizerName(optimizer),
                   FormatBytes(fixed.parameter_bytes), FormatBytes(fixed.gradient_bytes),
                   FormatBytes(fixed.optimizer_bytes), FormatBytes(fixed.input_bytes))}};
  if (options.device) {
    const int64_t budget = ActivationBudgetBytes(options.device->memory_bytes, fixed);
    rows.push_back({"device", fmt::format("{}: {}", options.device->name,
                                          bytes(options.device->memory_bytes))});
    rows.push_back({"activation budget",
                    budget > 0 ? bytes(budget)
                               : fmt::format("none: the fixed memory exceeds the device by {}",
                                             FormatBytes(-budget))});
  }
  fmt::print("{}", FormatTable({"wrote", output_path}, rows));
}

}  // namespace

Resolution ParseResolution(const std::string& text) {
  const std::string usage =
      fmt::format("invalid resolution '{}': use HEIGHTxWIDTH, e.g. 416x608", text);
  const size_t x = text.find_first_of("xX");
  auto number = [&](const std::string& part) -> int64_t {
    if (part.empty() || part.size() > 9) throw UsageError(usage);
    for (char c : part) {
      if (!std::isdigit(static_cast<unsigned char>(c))) throw UsageError(usage);
    }
    const int64_t value = std::stoll(part);
    if (value < 1) throw UsageError(usage);
    return value;
  };
  if (x == std::string::npos) throw UsageError(usage);
  return {.height = number(text.substr(0, x)), .width = number(text.substr(x + 1))};
}

CostModelChoice ToCostModelChoice(const ZooModelArgs& args) {
  const std::optional<CostModel> cost_model = ParseCostModel(args.cost_model);
  if (!cost_model) {
    throw UsageError(
        fmt::format("unknown cost model '{}'; choose flops or roofline", args.cost_model));
  }
  CostModelChoice choice{.cost_model = *cost_model};
  if (!args.device.empty()) choice.device = DeviceByName(args.device);
  if (choice.cost_model == CostModel::kRoofline && !choice.device) {
    throw UsageError("--cost-model roofline needs --device NAME (see remat zoo list)");
  }
  return choice;
}

std::vector<std::pair<std::string, int64_t*>> IntegerSizeFields(ZooModelArgs& args) {
  return {{"batch", &args.batch},   {"classes", &args.classes}, {"seq_length", &args.seq_length},
          {"layers", &args.layers}, {"hidden", &args.hidden},   {"heads", &args.heads},
          {"vocab", &args.vocab}};
}

ModelOptions ToModelOptions(const ZooModelArgs& args) {
  // Options of the other kind of model are usage errors (exit 2), in both commands.
  const bool image_options = !args.resolution.empty() || args.classes != 0;
  const bool transformer_options = args.seq_length != 0 || args.layers != 0 ||
                                   args.hidden != 0 || args.heads != 0 || args.vocab != 0;
  if (const ModelSpec* spec = FindModel(args.model)) {
    if (spec->is_transformer && image_options) {
      throw UsageError("the transformer takes --seq-length, --layers, --hidden, --heads and "
                       "--vocab, not --resolution or --classes");
    }
    if (!spec->is_transformer && transformer_options) {
      throw UsageError(fmt::format("{} is an image model: --seq-length, --layers, --hidden, "
                                   "--heads and --vocab are for the transformer",
                                   args.model));
    }
  }
  ModelOptions options;
  auto set = [](std::optional<int64_t>& field, int64_t value) {
    if (value != 0) field = value;
  };
  set(options.batch, args.batch);
  set(options.classes, args.classes);
  set(options.seq_length, args.seq_length);
  set(options.layers, args.layers);
  set(options.hidden, args.hidden);
  set(options.heads, args.heads);
  set(options.vocab, args.vocab);
  if (!args.resolution.empty()) options.resolution = ParseResolution(args.resolution);
  CostModelChoice choice = ToCostModelChoice(args);
  options.cost_model = choice.cost_model;
  options.device = std::move(choice.device);
  options.workspace = ToWorkspaceModel(args);
  return options;
}

const char* WorkspaceOptionName(WorkspaceModel model) {
  switch (model) {
    case WorkspaceModel::kLibtorchCpu: return "cpu";
    case WorkspaceModel::kPortable: return "portable";
    case WorkspaceModel::kNone: return "none";
  }
  return "?";
}

std::optional<WorkspaceModel> ToWorkspaceModel(const ZooModelArgs& args) {
  if (args.workspace.empty()) return std::nullopt;
  for (const WorkspaceModel model :
       {WorkspaceModel::kLibtorchCpu, WorkspaceModel::kPortable, WorkspaceModel::kNone}) {
    if (args.workspace == WorkspaceOptionName(model)) return model;
  }
  throw UsageError(fmt::format("unknown --workspace '{}'; choose cpu, portable or none",
                               args.workspace));
}

WorkspaceModel ChosenWorkspaceModel(const ZooModelArgs& args) {
  return ToWorkspaceModel(args).value_or(args.device.empty() ? WorkspaceModel::kLibtorchCpu
                                                             : WorkspaceModel::kPortable);
}

void AddWorkspaceOption(CLI::App& command, std::string& workspace,
                        const std::string& default_text) {
  command
      .add_option("--workspace", workspace,
                  fmt::format("memory inside a node's execution (docs/zoo.md): cpu (libtorch on "
                              "the CPU, oneDNN copies included), portable (any framework's "
                              "temporaries), none (no workspace, the paper's accounting); "
                              "default: {}",
                              default_text))
      ->check(CLI::IsMember({"cpu", "portable", "none"}));
}

Optimizer ToOptimizer(const ZooModelArgs& args) {
  const std::optional<Optimizer> optimizer = ParseOptimizer(args.optimizer);
  if (!optimizer) {
    throw UsageError(
        fmt::format("unknown optimizer '{}'; choose sgd, momentum or adam", args.optimizer));
  }
  return *optimizer;
}

void AddModelSizeOptions(CLI::App& command, ZooModelArgs& args, const std::string& defaults) {
  command.add_option("--batch", args.batch, fmt::format("batch size (default: {})", defaults))
      ->check(CLI::Range(1, 1000000));
  command.add_option("--resolution", args.resolution,
                     "input HEIGHTxWIDTH of an image model, e.g. 416x608");
  command.add_option("--classes", args.classes, "output classes of an image model")
      ->check(CLI::Range(1, 1 << 24));
  command.add_option("--seq-length", args.seq_length, "transformer: sequence length")
      ->check(CLI::PositiveNumber);
  command.add_option("--layers", args.layers, "transformer: number of blocks")
      ->check(CLI::PositiveNumber);
  command.add_option("--hidden", args.hidden, "transformer: hidden size")
      ->check(CLI::PositiveNumber);
  command.add_option("--heads", args.heads, "transformer: attention heads")
      ->check(CLI::PositiveNumber);
  command.add_option("--vocab", args.vocab, "transformer: vocabulary size")
      ->check(CLI::PositiveNumber);
}

void AddZooModelOptions(CLI::App& command, ZooModelArgs& args) {
  AddModelSizeOptions(command, args, "the model's, see remat zoo list");
  command
      .add_option("--cost-model", args.cost_model,
                  "node costs: flops (analytic FLOPs) or roofline (ms on --device)")
      ->check(CLI::IsMember({"flops", "roofline"}));
  command.add_option("--device", args.device,
                     "device preset: v100-16gb, a100-40gb, a100-80gb, h100-80gb, h200-141gb");
  command
      .add_option("--optimizer", args.optimizer,
                  "optimizer state in fixed memory: sgd (none), momentum (1 copy), adam (2)")
      ->check(CLI::IsMember({"sgd", "momentum", "adam"}));
}

void AddZooCommands(CLI::App& app, int& exit_code) {
  CLI::App* zoo = app.add_subcommand("zoo", "the model zoo: list models, export their graphs");
  zoo->require_subcommand(1);

  auto list_json = std::make_shared<bool>(false);
  CLI::App* list = zoo->add_subcommand("list", "models, parameter counts, default sizes, devices");
  list->add_flag("--json", *list_json, "machine-readable output");
  list->callback([=, &exit_code] {
    PrintList(*list_json);
    exit_code = kExitOk;
  });

  auto args = std::make_shared<ZooModelArgs>();
  auto output_path = std::make_shared<std::string>();
  CLI::App* exporter =
      zoo->add_subcommand("export", "write a model's training graph as a remat graph file");
  exporter->add_option("model", args->model, "model name (see remat zoo list)")->required();
  AddZooModelOptions(*exporter, *args);
  AddWorkspaceOption(*exporter, args->workspace, kZooWorkspaceDefault);
  exporter->add_option("-o,--output", *output_path, "output file (remat JSON)")
      ->check(kOutputPath)->required();
  exporter->callback([=, &exit_code] {
    RunExport(*args, *output_path);
    exit_code = kExitOk;
  });
}

}  // namespace remat
