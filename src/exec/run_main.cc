// remat-run: executes plans of zoo networks on libtorch (CPU) and profiles node costs.
//   remat-run step --model NAME [--batch N] [--resolution HxW] [--classes N]
//                  (--schedule FILE | --strategy S [--budget SIZE|P%]) [--threads N] [--json]
//   remat-run train --model NAME [--batch N] [--resolution HxW] (--memory SIZE | --budget SIZE)
//                  --strategy S --steps K [--check-gradients] [--json]
//   remat-run profile --model NAME [--batch N] [--resolution HxW] [--classes N]
//                  [--threads N] [--warmup N] [--repeats N] -o costs.json
// Exit codes as remat's: 0 success, 1 no schedule, 2 usage, 3 bad input, 70 internal error.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <malloc.h>

#include <climits>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/cost_comparison.h"
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
#include "exec/trainer.h"
#include "cli/commands.h"
#include "core/sizes.h"
#include "solvers/strategy_runner.h"
#include "strategies/checkpoint_all.h"
#include "zoo/fixed_memory.h"
#include "zoo/registry.h"

namespace remat::exec {
namespace {

constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

struct ModelArgs {
  std::string model;
  int64_t batch = 2;
  std::optional<std::string> resolution;  // image models; default 32x32
  std::optional<int64_t> classes;         // image models; default 10
  int32_t threads = 1;
  uint64_t seed = 7;
  // The transformer's sizes (the zoo's defaults when absent).
  std::optional<int64_t> seq_length, layers, hidden, heads, vocab;
};

void AddModelOptions(CLI::App* app, ModelArgs& args) {
  app->add_option("--model", args.model, "zoo model: vgg16, vgg19, resnet50, mobilenet, unet, "
                                         "fcn8, segnet, transformer")->required();
  app->add_option("--batch", args.batch, "batch size")->capture_default_str();
  app->add_option("--resolution", args.resolution, "image models: input HxW (default 32x32)");
  app->add_option("--classes", args.classes, "image models: output classes (default 10)");
  app->add_option("--threads", args.threads, "ATen intra-op threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  app->add_option("--seed", args.seed, "weights, input and labels seed")->capture_default_str();
  app->add_option("--seq-length", args.seq_length, "transformer: sequence length");
  app->add_option("--layers", args.layers, "transformer: number of blocks");
  app->add_option("--hidden", args.hidden, "transformer: hidden size");
  app->add_option("--heads", args.heads, "transformer: attention heads");
  app->add_option("--vocab", args.vocab, "transformer: vocabulary size");
}

BuiltModel Build(const ModelArgs& args) {
  if (remat::ModelByName(args.model).is_transformer) {
    if (args.resolution || args.classes) {
      throw remat::UsageError("the transformer takes --seq-length, --layers, --hidden, --heads "
                              "and --vocab, not --resolution or --classes");
    }
    return BuildModel(args.model, {.batch = args.batch, .seq_length = args.seq_length,
                                   .layers = args.layers, .hidden = args.hidden,
                                   .heads = args.heads, .vocab = args.vocab});
  }
  if (args.seq_length || args.layers || args.hidden || args.heads || args.vocab) {
    throw remat::UsageError(fmt::format("{} is an image model: --seq-length, --layers, --hidden, "
                                        "--heads and --vocab are for the transformer",
                                        args.model));
  }
  Resolution resolution;
  const std::string text = args.resolution.value_or("32x32");
  if (std::sscanf(text.c_str(), "%ldx%ld", &resolution.height, &resolution.width) != 2) {
    throw CLI::ValidationError("--resolution", "expected HxW, e.g. 32x32");
  }
  return BuildModel(args.model,
                    {.batch = args.batch, .resolution = resolution,
                     .classes = args.classes.value_or(10)});
}

// An activation budget: bytes with or without a unit, or P% of the no-remat peak.
int64_t ParseBudget(const std::string& text, const Graph& graph) {
  return ResolveSize(ParseSize(text), CheckpointAll(graph, kUnlimited).peak_bytes);
}

// The short names remat-run has always taken, beside every name of `remat solve`.
std::string StrategyName(const std::string& name) {
  if (name == "chen-sqrtn") return "chen-sqrtn-linear";
  if (name == "chen-greedy") return "chen-greedy-linear";
  return name;
}

// A simulated schedule within the budget, or nullopt (the reason printed on stderr).
std::optional<StrategyResult> PlanStrategy(const std::string& strategy, const Graph& graph,
                                           int64_t budget_bytes, double time_limit_s = 60) {
  const StrategyRow row = RunStrategy(StrategyName(strategy), graph, budget_bytes,
                                      {.time_limit_s = time_limit_s, .progress = true});
  if (!row.fits()) {
    fmt::print(stderr, "remat-run: {} found no schedule within {} ({} B){}{}\n", strategy,
               FormatBytes(budget_bytes), budget_bytes, row.note.empty() ? "" : ": ", row.note);
    return std::nullopt;
  }
  return row.result;
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
    std::optional<StrategyResult> result = PlanStrategy(strategy, graph, budget_bytes);
    if (!result) return 1;
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
  return GradientsAgree(cmp) ? 0 : 70;
}

struct TrainArgs {
  std::string strategy;
  std::string memory;      // device memory: the budget is memory - fixed memory (SGD)
  std::string budget;      // activation budget
  std::string costs_path;  // a `remat-run profile` cost profile for planning
  double time_limit_s = 60;
  TrainOptions options;
  bool json = false;
};

std::string OptionalNumber(const std::optional<double>& value) {
  return value ? fmt::format("{:.3g}", *value) : "-";
}

// Plans under the budget, trains, and reports losses, peaks and overheads (issue 6's verb).
int RunTrain(const ModelArgs& args, const TrainArgs& train) {
  at::set_num_threads(args.threads);
  CountingAllocator::Install();
  const BuiltModel model = Build(args);
  Graph graph = BuildTrainingGraph(model.forward);
  if (!train.costs_path.empty()) graph = ApplyCostProfile(graph, train.costs_path);
  const FixedMemory fixed = ComputeFixedMemory(model.info, Optimizer::kSgd);
  const StrategyResult no_remat = CheckpointAll(graph, kUnlimited);
  int64_t budget_bytes = 0;
  if (!train.memory.empty()) {
    const SizeSpec memory = ParseSize(train.memory);
    if (memory.percent) throw UsageError("--memory takes a size, not a percentage");
    const int64_t memory_bytes = ResolveSize(memory, 0);
    budget_bytes = ActivationBudgetBytes(memory_bytes, fixed);
    if (budget_bytes <= 0) {
      throw InputError(fmt::format("the fixed memory {} ({} B) alone exceeds the device memory {} "
                                   "({} B)", FormatBytes(fixed.total_bytes()), fixed.total_bytes(),
                                   FormatBytes(memory_bytes), memory_bytes));
    }
  } else {
    budget_bytes = ResolveSize(ParseSize(train.budget), no_remat.peak_bytes);
  }
  const std::optional<StrategyResult> planned =
      PlanStrategy(train.strategy, graph, budget_bytes, train.time_limit_s);
  if (!planned) return 1;

  Network network(model.info, args.seed);
  const TrainReport report = Train(network, graph, BuildPlan(graph, planned->schedule),
                                   BuildPlan(graph, no_remat.schedule), train.options);
  const double predicted_overhead = planned->cost / no_remat.cost;
  const StepResult& peak = report.peak_step;
  const bool failed = report.gradients_match.has_value() && !*report.gradients_match;
  if (train.json) {
    nlohmann::json steps = nlohmann::json::array();
    nlohmann::json losses = nlohmann::json::array();
    for (const TrainStepRecord& s : report.steps) {
      losses.push_back(s.loss);
      steps.push_back({{"loss", s.loss}, {"seconds", s.seconds},
                       {"no_remat_seconds", s.no_remat_seconds},
                       {"measured_peak_bytes", s.measured_peak_bytes},
                       {"max_abs_gradient_diff", s.max_abs_gradient_diff
                                                     ? nlohmann::json(*s.max_abs_gradient_diff)
                                                     : nlohmann::json(nullptr)}});
    }
    const auto optional = [](const auto& v) {
      return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
    };
    const nlohmann::json out = {
        {"schema", "remat.run-train/1"}, {"model", args.model}, {"graph", graph.name()},
        {"cost_unit", graph.cost_unit()}, {"strategy", StrategyName(train.strategy)},
        {"threads", args.threads}, {"learning_rate", train.options.learning_rate},
        {"budget_bytes", budget_bytes}, {"fixed_bytes", fixed.total_bytes()},
        {"gradients_checked", train.options.check_gradients},
        {"gradients_match", optional(report.gradients_match)},
        {"max_abs_gradient_diff", optional(report.max_abs_gradient_diff)},
        {"predicted_peak_bytes", peak.predicted_peak_bytes},
        {"tensor_peak_bytes", peak.tensor_peak_bytes},
        {"measured_peak_bytes", peak.measured_peak_bytes},
        {"largest_transient_bytes", peak.largest_transient_bytes},
        {"largest_transient_node", peak.largest_transient_node < 0
                                       ? std::string()
                                       : graph.node(peak.largest_transient_node).name},
        {"no_remat_predicted_peak_bytes", no_remat.peak_bytes},
        {"no_remat_measured_peak_bytes", report.no_remat_measured_peak_bytes},
        {"cost", planned->cost}, {"no_remat_cost", no_remat.cost},
        {"predicted_overhead", predicted_overhead},
        {"measured_overhead", report.measured_overhead()},
        {"median_step_seconds", report.median_seconds},
        {"median_no_remat_step_seconds", report.median_no_remat_seconds},
        {"recomputations", peak.recomputations}, {"losses", losses}, {"steps", steps}};
    fmt::print("{}\n", out.dump(1));
    return failed ? 70 : 0;
  }
  fmt::print("{} under {}: activation budget {} ({} B), {} SGD step(s), learning rate {}\n",
             graph.name(), StrategyName(train.strategy), FormatBytes(budget_bytes), budget_bytes,
             report.steps.size(), train.options.learning_rate);
  fmt::print("{:>5}  {:>12}  {:>10}  {:>10}  {:>14}  {:>15}\n", "step", "loss", "time s",
             "no-remat s", "measured peak", "max |grad diff|");
  for (size_t k = 0; k < report.steps.size(); ++k) {
    const TrainStepRecord& s = report.steps[k];
    fmt::print("{:>5}  {:>12.8f}  {:>10.4f}  {:>10.4f}  {:>14}  {:>15}\n", k + 1, s.loss,
               s.seconds, s.no_remat_seconds, FormatBytes(s.measured_peak_bytes),
               OptionalNumber(s.max_abs_gradient_diff));
  }
  fmt::print("activation peak: predicted {} ({} B), measured {} ({} B: +{} B transients, "
             "largest {} B in {}); no-remat: predicted {}, measured {}\n",
             FormatBytes(peak.predicted_peak_bytes), peak.predicted_peak_bytes,
             FormatBytes(peak.measured_peak_bytes), peak.measured_peak_bytes,
             peak.measured_peak_bytes - peak.predicted_peak_bytes, peak.largest_transient_bytes,
             peak.largest_transient_node < 0 ? "-" : graph.node(peak.largest_transient_node).name,
             FormatBytes(no_remat.peak_bytes), FormatBytes(report.no_remat_measured_peak_bytes));
  fmt::print("overhead: predicted {:.3f}x (cost {:.6g} vs {:.6g} {}), measured {:.3f}x (median "
             "step {:.4f} s vs {:.4f} s, {} recomputations)\n",
             predicted_overhead, planned->cost, no_remat.cost, graph.cost_unit(),
             report.measured_overhead(), report.median_seconds, report.median_no_remat_seconds,
             peak.recomputations);
  if (report.gradients_match) {
    fmt::print("gradients vs autograd: {} in every step (max |diff| {:.3g})\n",
               *report.gradients_match ? "match" : "DO NOT match", *report.max_abs_gradient_diff);
  }
  fmt::print("fixed memory (SGD): {} (parameters {}, gradients {}, input {})\n",
             FormatBytes(fixed.total_bytes()), FormatBytes(fixed.parameter_bytes),
             FormatBytes(fixed.gradient_bytes), FormatBytes(fixed.input_bytes));
  return failed ? 70 : 0;
}

// How well the zoo's FLOP costs predict the measured times (issue 6): printed after a profile.
void PrintCostComparison(const Graph& graph, const CostProfile& profile) {
  std::vector<double> flops, measured;
  for (int32_t v = 0; v < graph.size(); ++v) {
    flops.push_back(graph.node(v).cost);
    measured.push_back(profile.nodes[v].cost_ms);
  }
  const CostComparison c = CompareCosts(flops, measured);
  fmt::print("FLOP costs vs measured times over {} nodes: Pearson r {:.3f}, Spearman rho {:.3f}\n",
             c.nodes, c.pearson, c.spearman);
  fmt::print("at the step's rate of {:.3g} GFLOP/s: median node error {:.0f}%, {:.0f}% of nodes "
             "within 2x\n",
             1e-6 / c.rate, 100 * c.median_relative_error, 100 * c.within_factor_2);
  fmt::print("zero-FLOP nodes: {} taking {:.1f}% of the measured step\n", c.zero_cost_nodes,
             100 * c.zero_cost_measured_share);
  // Forward nodes run their own layer; a backward node bwd(j) runs the backward kernels of j's
  // consumers (DESIGN §1's edges), while the FLOP model charges it twice j's forward.
  const int32_t loss = *graph.loss();
  for (const bool forward : {true, false}) {
    std::vector<double> part_flops, part_measured;
    for (int32_t v = 0; v < graph.size(); ++v) {
      if (v == loss || (v < loss) != forward) continue;
      part_flops.push_back(flops[v]);
      part_measured.push_back(measured[v]);
    }
    const CostComparison part = CompareCosts(part_flops, part_measured);
    fmt::print("{} nodes: Pearson r {:.3f}, Spearman rho {:.3f}, {:.3g} GFLOP/s, median error "
               "{:.0f}%\n",
               forward ? "forward" : "backward", part.pearson, part.spearman, 1e-6 / part.rate,
               100 * part.median_relative_error);
  }
  fmt::print("largest errors:\n");
  for (const NodeCostError& e : c.worst) {
    fmt::print("  {:>5} {:<28} predicted {:>9.3f} ms  measured {:>9.3f} ms\n", e.id,
               graph.node(e.id).name, e.predicted, e.measured);
  }
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
  PrintCostComparison(graph, profile);
  return 0;
}

}  // namespace
}  // namespace remat::exec

int main(int argc, char** argv) {
  using namespace remat::exec;
  // Freed memory stays in the process, as in the caching allocators of training frameworks.
  // By default glibc maps large blocks afresh and returns them on free, so every step paid its
  // page faults again: they dominated and scattered step times (1.2-2.1 s for a 0.45 s VGG16
  // step at 64x64, docs/exec.md). Byte counts are unaffected (the counting allocator wraps c10).
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
  CLI::App app{"remat-run: run rematerialized training steps and profile node costs on libtorch"};
  app.require_subcommand(1);
  app.set_version_flag("--version", REMAT_VERSION);

  ModelArgs step_args;
  std::string schedule_path, strategy = "checkpoint-all", budget;
  bool json = false;
  CLI::App* step = app.add_subcommand("step", "run one training step following a plan");
  AddModelOptions(step, step_args);
  // A schedule file fixes the plan: --strategy and --budget would be silently ignored, so
  // they are refused with it (exit 2).
  CLI::Option* schedule_opt =
      step->add_option("--schedule", schedule_path, "schedule JSON made for the same graph");
  step->add_option("--strategy", strategy,
                   "checkpoint-all, chen-sqrtn, chen-greedy, approx or optimal")
      ->capture_default_str()
      ->excludes(schedule_opt);
  step->add_option("--budget", budget, "activation budget: bytes or P% of the no-remat peak")
      ->excludes(schedule_opt);
  step->add_flag("--json", json, "machine-readable output");

  ModelArgs train_args;
  TrainArgs train;
  CLI::App* train_cmd = app.add_subcommand("train", "plan, then train K SGD steps under the plan");
  AddModelOptions(train_cmd, train_args);
  auto* memory_opt = train_cmd->add_option(
      "--memory", train.memory, "device memory (e.g. 2GiB): the budget is memory - fixed memory");
  auto* budget_opt = train_cmd->add_option(
      "--budget", train.budget, "activation budget: a size (e.g. 300MiB) or P% of the no-remat peak");
  memory_opt->excludes(budget_opt);
  train_cmd->add_option("--strategy", train.strategy, "a strategy of `remat solve` "
                        "(checkpoint-all, chen-sqrtn, griewank, approx, optimal, ...)")
      ->required();
  train_cmd->add_option("--steps", train.options.steps, "SGD steps")->required()
      ->check(CLI::Range(1, 1000000));
  train_cmd->add_option("--learning-rate", train.options.learning_rate, "SGD learning rate")
      ->capture_default_str()
      ->check(remat::FiniteRange(0.0, 1e6));
  train_cmd->add_flag("--check-gradients", train.options.check_gradients,
                      "compare every step's gradients with plain autograd");
  train_cmd->add_option("--costs", train.costs_path,
                        "plan with a cost profile of `remat-run profile` (milliseconds)");
  train_cmd->add_option("--time-limit", train.time_limit_s, "solver time limit, seconds")
      ->capture_default_str()
      ->check(remat::FiniteRange(0.001, 1e7));
  train_cmd->add_flag("--json", train.json, "machine-readable output");

  ModelArgs profile_args;
  ProfileOptions profile_options;
  std::string output;
  CLI::App* profile = app.add_subcommand("profile", "time every node and write a cost profile");
  AddModelOptions(profile, profile_args);
  profile->add_option("--warmup", profile_options.warmup, "untimed runs per node")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  profile->add_option("--repeats", profile_options.repeats, "timed runs per node (median)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  profile->add_option("-o,--output", output, "cost profile JSON to write")
      ->check(remat::kOutputPath)->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (*step) return RunStep(step_args, schedule_path, strategy, budget, json);
    if (*train_cmd) {
      if (train.memory.empty() && train.budget.empty()) {
        throw remat::UsageError("train needs --memory SIZE or --budget SIZE");
      }
      return RunTrain(train_args, train);
    }
    profile_options.threads = profile_args.threads;
    return RunProfile(profile_args, profile_options, output);
  } catch (const CLI::ValidationError& e) {
    fmt::print(stderr, "remat-run: {}\n", e.what());
    return 2;
  } catch (const remat::UsageError& e) {
    fmt::print(stderr, "remat-run: {}\n", e.what());
    return 2;
  } catch (const remat::InputError& e) {
    fmt::print(stderr, "remat-run: {}\n", e.what());
    return 3;
  } catch (const std::invalid_argument& e) {  // a malformed size (ParseSize)
    fmt::print(stderr, "remat-run: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "remat-run: internal error: {}\n", e.what());
    return 70;
  }
}
