// remat-run: executes plans of zoo networks on libtorch (CPU) and profiles node costs.
//   remat-run step --model NAME [--batch N] [--resolution HxW] [--classes N]
//                  (--schedule FILE | --strategy S [--budget SIZE|P%]) [--threads N] [--json]
//   remat-run profile --model NAME [--batch N] [--resolution HxW] [--classes N]
//                  [--threads N] [--warmup N] [--repeats N] -o costs.json
// Exit codes as remat's: 0 success, 1 no schedule, 2 usage, 3 bad input, 70 internal error.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/cost_profile.h"
#include "core/errors.h"
#include "core/plan.h"
#include "core/schedule_json.h"
#include "core/simulator.h"
#include "core/training_graph.h"
#include "exec/counting_allocator.h"
#include "exec/executor.h"
#include "exec/network.h"
#include "exec/profiler.h"
#include "solvers/checkmate_solver.h"
#include "solvers/rounding.h"
#include "strategies/checkpoint_all.h"
#include "strategies/chen.h"
#include "zoo/registry.h"

namespace remat::exec {
namespace {

constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

struct ModelArgs {
  std::string model;
  int64_t batch = 2;
  std::string resolution = "32x32";
  int64_t classes = 10;
  int32_t threads = 1;
  uint64_t seed = 7;
};

void AddModelOptions(CLI::App* app, ModelArgs& args) {
  app->add_option("--model", args.model, "zoo model (image models: vgg16, vgg19, resnet50, "
                                         "mobilenet, unet, fcn8, segnet)")->required();
  app->add_option("--batch", args.batch, "batch size")->capture_default_str();
  app->add_option("--resolution", args.resolution, "input HxW")->capture_default_str();
  app->add_option("--classes", args.classes, "output classes")->capture_default_str();
  app->add_option("--threads", args.threads, "ATen intra-op threads")->capture_default_str();
  app->add_option("--seed", args.seed, "weights, input and labels seed")->capture_default_str();
}

BuiltModel Build(const ModelArgs& args) {
  if (remat::ModelByName(args.model).is_transformer) {
    throw InputError(fmt::format("{}: the executor runs the image models only (no attention, "
                                 "layer-norm or embedding kernels yet)", args.model));
  }
  Resolution resolution;
  if (std::sscanf(args.resolution.c_str(), "%ldx%ld", &resolution.height, &resolution.width) != 2) {
    throw CLI::ValidationError("--resolution", "expected HxW, e.g. 32x32");
  }
  return BuildModel(args.model,
                    {.batch = args.batch, .resolution = resolution, .classes = args.classes});
}

int64_t ParseBudget(const std::string& text, const Graph& graph) {
  if (!text.empty() && text.back() == '%') {
    const double percent = std::stod(text.substr(0, text.size() - 1));
    return static_cast<int64_t>(percent / 100.0 *
                                static_cast<double>(CheckpointAll(graph, kUnlimited).peak_bytes));
  }
  return std::stoll(text);
}

std::optional<StrategyResult> Plan(const std::string& strategy, const Graph& graph,
                                   int64_t budget_bytes) {
  if (strategy == "checkpoint-all") return CheckpointAll(graph, budget_bytes);
  if (strategy == "chen-sqrtn") return ChenSqrtN(graph, budget_bytes, CandidateSet::kLinearized);
  if (strategy == "chen-greedy") return ChenGreedy(graph, budget_bytes, CandidateSet::kLinearized);
  if (strategy == "approx") return SolveApproxDeterministic(graph, budget_bytes).schedule;
  if (strategy == "optimal") return SolveOptimal(graph, budget_bytes).schedule;
  throw CLI::ValidationError("--strategy", "one of checkpoint-all, chen-sqrtn, chen-greedy, "
                                           "approx, optimal");
}

int RunStep(const ModelArgs& args, const std::string& schedule_path, const std::string& strategy,
            const std::string& budget, bool json) {
  at::set_num_threads(args.threads);
  CountingAllocator::Install();
  const BuiltModel model = Build(args);
  const Graph graph = BuildTrainingGraph(model.forward);
  Schedule schedule;
  std::string name = strategy;
  if (!schedule_path.empty()) {
    ScheduleDocument document = LoadScheduleFile(schedule_path);
    if (StructureFingerprint(document.graph) != StructureFingerprint(graph)) {
      throw InputError(fmt::format("{}: the schedule was made for another graph than {}",
                                   schedule_path, graph.name()));
    }
    schedule = std::move(document.schedule);
    name = document.info.strategy;
  } else {
    const int64_t budget_bytes = budget.empty() ? kUnlimited : ParseBudget(budget, graph);
    std::optional<StrategyResult> result = Plan(strategy, graph, budget_bytes);
    if (!result || result->status != FitStatus::kFits) {
      fmt::print(stderr, "remat-run: {} found no schedule within {} bytes\n", strategy,
                 budget_bytes);
      return 1;
    }
    schedule = std::move(result->schedule);
  }
  Network network(model.info, args.seed);
  Executor executor(network, graph);
  const StepResult step = executor.Run(BuildPlan(graph, schedule));
  const auto gradients = CopyGradients(network);
  const ReferenceStep reference = AutogradStep(network);
  const GradientComparison cmp = CompareGradients(gradients, reference.gradients);
  const int64_t fixed = network.parameter_bytes() + network.gradient_bytes() + network.input_bytes();
  if (json) {
    const nlohmann::json out = {
        {"schema", "remat.run-step/1"}, {"model", args.model}, {"graph", graph.name()},
        {"strategy", name}, {"threads", args.threads}, {"loss", step.loss},
        {"autograd_loss", reference.loss}, {"gradients_match", cmp.bitwise_equal},
        {"max_abs_gradient_diff", cmp.max_abs_diff},
        {"predicted_peak_bytes", step.predicted_peak_bytes},
        {"tensor_peak_bytes", step.tensor_peak_bytes},
        {"measured_peak_bytes", step.measured_peak_bytes},
        {"fixed_bytes", fixed}, {"allocator_fixed_bytes", step.fixed_bytes},
        {"largest_transient_bytes", step.largest_transient_bytes},
        {"largest_transient_node", step.largest_transient_node < 0 ? std::string()
                                   : graph.node(step.largest_transient_node).name},
        {"evaluations", step.evaluations}, {"recomputations", step.recomputations},
        {"step_seconds", step.seconds}};
    fmt::print("{}\n", out.dump(1));
  } else {
    fmt::print("{} under {}: loss {:.9g} (autograd {:.9g})\n", graph.name(), name, step.loss,
               reference.loss);
    fmt::print("gradients vs autograd: max |diff| {:.3g}, bitwise equal: {}\n", cmp.max_abs_diff,
               cmp.bitwise_equal ? "yes" : "no");
    fmt::print("activation peak: predicted {} B, held tensors {} B, measured {} B (+{} B "
               "transients)\n",
               step.predicted_peak_bytes, step.tensor_peak_bytes, step.measured_peak_bytes,
               step.measured_peak_bytes - step.predicted_peak_bytes);
    if (step.largest_transient_node >= 0) {
      fmt::print("largest transient: {} B in node {} ({})\n", step.largest_transient_bytes,
                 step.largest_transient_node, graph.node(step.largest_transient_node).name);
    }
    fmt::print("fixed memory: {} B (parameters and statistics {} B, gradients {} B, input and "
               "labels {} B)\n",
               fixed, network.parameter_bytes(), network.gradient_bytes(), network.input_bytes());
    fmt::print("evaluations {} ({} recomputations), step {:.3f} s on {} thread(s)\n",
               step.evaluations, step.recomputations, step.seconds, args.threads);
  }
  return cmp.bitwise_equal || cmp.max_abs_diff <= 1e-6 * std::max(1.0, cmp.max_abs_gradient) ? 0 : 70;
}

int RunProfile(const ModelArgs& args, const ProfileOptions& options, const std::string& output) {
  const BuiltModel model = Build(args);
  const Graph graph = BuildTrainingGraph(model.forward);
  Network network(model.info, args.seed);
  const CostProfile profile = ProfileGraph(network, graph, options);
  SaveCostProfile(profile, output);
  double total = 0;
  for (const CostProfileNode& node : profile.nodes) total += node.cost_ms;
  fmt::print(stderr, "remat-run: profiled {} nodes of {} ({:.3f} ms per step) into {}\n",
             profile.nodes.size(), graph.name(), total, output);
  return 0;
}

}  // namespace
}  // namespace remat::exec

int main(int argc, char** argv) {
  using namespace remat::exec;
  CLI::App app{"remat-run: run rematerialized training steps and profile node costs on libtorch"};
  app.require_subcommand(1);
  app.set_version_flag("--version", REMAT_VERSION);

  ModelArgs step_args;
  std::string schedule_path, strategy = "checkpoint-all", budget;
  bool json = false;
  CLI::App* step = app.add_subcommand("step", "run one training step following a plan");
  AddModelOptions(step, step_args);
  step->add_option("--schedule", schedule_path, "schedule JSON made for the same graph");
  step->add_option("--strategy", strategy,
                   "checkpoint-all, chen-sqrtn, chen-greedy, approx or optimal")
      ->capture_default_str();
  step->add_option("--budget", budget, "activation budget: bytes or P% of the no-remat peak");
  step->add_flag("--json", json, "machine-readable output");

  ModelArgs profile_args;
  ProfileOptions profile_options;
  std::string output;
  CLI::App* profile = app.add_subcommand("profile", "time every node and write a cost profile");
  AddModelOptions(profile, profile_args);
  profile->add_option("--warmup", profile_options.warmup, "untimed runs per node")
      ->capture_default_str();
  profile->add_option("--repeats", profile_options.repeats, "timed runs per node (median)")
      ->capture_default_str();
  profile->add_option("-o,--output", output, "cost profile JSON to write")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (*step) return RunStep(step_args, schedule_path, strategy, budget, json);
    profile_options.threads = profile_args.threads;
    return RunProfile(profile_args, profile_options, output);
  } catch (const CLI::ValidationError& e) {
    fmt::print(stderr, "remat-run: {}\n", e.what());
    return 2;
  } catch (const remat::InputError& e) {
    fmt::print(stderr, "remat-run: {}\n", e.what());
    return 3;
  } catch (const std::exception& e) {
    fmt::print(stderr, "remat-run: internal error: {}\n", e.what());
    return 70;
  }
}
