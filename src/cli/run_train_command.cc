// remat-run train: plan under a budget, train K SGD steps under the plan, and report losses,
// peaks and overheads (predicted by the simulator, measured on libtorch).
#include "cli/run_train_command.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/load_graph.h"
#include "cli/output.h"
#include "cli/progress.h"
#include "cli/measured_workspace.h"
#include "cli/run_common.h"
#include "core/cost_profile.h"
#include "core/plan.h"
#include "core/sizes.h"
#include "planning/budget.h"
#include "core/training_graph.h"
#include "exec/counting_allocator.h"
#include "exec/network.h"
#include "exec/trainer.h"
#include "model/fixed_memory.h"
#include "strategies/checkpoint_all.h"

namespace remat {
namespace {

struct TrainArgs {
  RunModelArgs model;
  std::string strategy;
  std::string memory;      // device memory: the budget is memory - fixed memory (SGD)
  std::string budget;      // activation budget
  std::string costs_path;  // a `remat-run profile` cost profile for planning
  bool measured_workspace = false;
  double time_limit_s = 60;
  bool verbose = false;
  bool quiet = false;
  exec::TrainOptions options;
  bool json = false;
};

std::string OptionalNumber(const std::optional<double>& value) {
  return value ? fmt::format("{:.3g}", *value) : "-";
}

nlohmann::json OptionalJson(const auto& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// What one `remat-run train` produced, for printing.
struct TrainOutcome {
  const Graph& graph;
  const StrategyResult& planned;
  const StrategyResult& no_remat;
  const FixedMemory& fixed;
  int64_t budget_bytes = 0;
  const exec::TrainReport& report;
  std::string strategy;
  std::string transient_node;  // the node with the largest transient allocation, or ""
  double predicted_overhead() const { return planned.cost / no_remat.cost; }
};

void PrintJson(const TrainArgs& args, const TrainOutcome& o) {
  const exec::StepResult& peak = o.report.peak_step;
  nlohmann::json steps = nlohmann::json::array();
  nlohmann::json losses = nlohmann::json::array();
  for (const exec::TrainStepRecord& s : o.report.steps) {
    losses.push_back(s.loss);
    steps.push_back({{"loss", s.loss}, {"seconds", s.seconds},
                     {"no_remat_seconds", s.no_remat_seconds},
                     {"measured_peak_bytes", s.measured_peak_bytes},
                     {"gradients_match", OptionalJson(s.gradients_match)},
                     {"max_abs_gradient_diff", OptionalJson(s.max_abs_gradient_diff)}});
  }
  const nlohmann::json out = {
      {"schema", "remat.run-train/1"}, {"model", args.model.zoo.model}, {"graph", o.graph.name()},
      {"cost_unit", o.graph.cost_unit()}, {"strategy", o.strategy},
      {"parameters", o.planned.parameters},
      {"threads", args.model.threads}, {"learning_rate", args.options.learning_rate},
      {"budget_bytes", o.budget_bytes}, {"fixed_bytes", o.fixed.total_bytes()},
      {"gradients_checked", args.options.check_gradients},
      {"gradients_match", OptionalJson(o.report.gradients_match)},
      {"gradients_bitwise_equal", OptionalJson(o.report.gradients_bitwise_equal)},
      {"max_abs_gradient_diff", OptionalJson(o.report.max_abs_gradient_diff)},
      {"predicted_peak_bytes", peak.predicted_peak_bytes},
      {"predicted_tensor_peak_bytes", peak.predicted_tensor_peak_bytes},
      {"tensor_peak_bytes", peak.tensor_peak_bytes},
      {"measured_peak_bytes", peak.measured_peak_bytes},
      {"largest_transient_bytes", peak.largest_transient_bytes},
      {"largest_transient_node", o.transient_node},
      {"no_remat_predicted_peak_bytes", o.no_remat.peak_bytes},
      {"no_remat_measured_peak_bytes", o.report.no_remat_measured_peak_bytes},
      {"cost", o.planned.cost}, {"no_remat_cost", o.no_remat.cost},
      {"predicted_overhead", o.predicted_overhead()},
      {"measured_overhead", o.report.measured_overhead()},
      {"median_step_seconds", o.report.median_seconds},
      {"median_no_remat_step_seconds", o.report.median_no_remat_seconds},
      {"recomputations", peak.recomputations}, {"losses", losses}, {"steps", steps}};
  fmt::print("{}\n", out.dump(1));
}

void PrintTable(const TrainArgs& args, const TrainOutcome& o) {
  const exec::StepResult& peak = o.report.peak_step;
  PrintWrapped(fmt::format("{} under {}: activation budget {}, {} SGD step(s), learning rate {}",
                           o.graph.name(), o.strategy, FormatBytes(o.budget_bytes),
                           o.report.steps.size(), args.options.learning_rate));
  fmt::print("{:>5}  {:>12}  {:>10}  {:>10}  {:>14}  {:>15}\n", "step", "loss", "time s",
             "no-remat s", "measured peak", "max |grad diff|");
  for (size_t k = 0; k < o.report.steps.size(); ++k) {
    const exec::TrainStepRecord& s = o.report.steps[k];
    fmt::print("{:>5}  {:>12.8f}  {:>10.4f}  {:>10.4f}  {:>14}  {:>15}\n", k + 1, s.loss,
               s.seconds, s.no_remat_seconds, FormatBytes(s.measured_peak_bytes),
               OptionalNumber(s.max_abs_gradient_diff));
  }
  PrintWrapped(fmt::format("activation peak: predicted {}, measured {} ({} transients, largest "
                           "{} in {}); no-remat: predicted {}, measured {}",
                           FormatBytes(peak.predicted_peak_bytes),
                           FormatBytes(peak.measured_peak_bytes),
                           FormatBytesDifference(peak.measured_peak_bytes -
                                                 peak.predicted_peak_bytes),
                           FormatBytes(peak.largest_transient_bytes),
                           o.transient_node.empty() ? "-" : o.transient_node,
                           FormatBytes(o.no_remat.peak_bytes),
                           FormatBytes(o.report.no_remat_measured_peak_bytes)));
  PrintWrapped(fmt::format("overhead: predicted {:.3f}x (cost {:.6g} vs {:.6g} {}), measured "
                           "{:.3f}x (median step {:.4f} s vs {:.4f} s, {} recomputations)",
                           o.predicted_overhead(), o.planned.cost, o.no_remat.cost,
                           o.graph.cost_unit(), o.report.measured_overhead(),
                           o.report.median_seconds, o.report.median_no_remat_seconds,
                           peak.recomputations));
  if (o.report.gradients_match) {
    fmt::print("gradients vs autograd: {} in every step (max |diff| {:.3g}, bitwise equal: {})\n",
               *o.report.gradients_match ? "match" : "DO NOT match",
               *o.report.max_abs_gradient_diff,
               o.report.gradients_bitwise_equal.value_or(false) ? "yes" : "no");
  }
  fmt::print("fixed memory (SGD): {} (parameters {}, gradients {}, input {})\n",
             FormatBytes(o.fixed.total_bytes()), FormatBytes(o.fixed.parameter_bytes),
             FormatBytes(o.fixed.gradient_bytes), FormatBytes(o.fixed.input_bytes));
}

int RunTrain(const TrainArgs& args) {
  if (args.memory.empty() && args.budget.empty()) {
    throw UsageError("train needs --memory SIZE or --budget SIZE");
  }
  at::set_num_threads(args.model.threads);
  exec::CountingAllocator::Install();
  const BuiltModel model = BuildRunModel(args.model);
  Graph graph = BuildTrainingGraph(model.forward);
  if (!args.costs_path.empty()) graph = ApplyCostProfile(graph, args.costs_path);
  if (args.measured_workspace) {
    std::string note;
    graph = WithMeasuredWorkspace(graph, model.info, args.model.seed, args.model.threads, note);
    if (!args.quiet) fmt::print(stderr, "remat-run: workspace {}\n", note);
  }
  const FixedMemory fixed = ComputeFixedMemory(model.info, Optimizer::kSgd);
  const StrategyResult no_remat = CheckpointAll(graph, std::numeric_limits<int64_t>::max());
  if (!args.memory.empty() && args.memory.find('%') != std::string::npos) {
    throw UsageError("--memory takes a size, not a percentage");
  }
  const int64_t budget_bytes =
      ResolveBudget({.budget_text = args.budget, .memory_text = args.memory,
                     .model_fixed_bytes = fixed.total_bytes()},
                    no_remat.peak_bytes)
          .activation_bytes;
  const std::optional<StrategyResult> planned =
      PlanStrategy(args.strategy, graph, budget_bytes,
                   {.time_limit_s = args.time_limit_s, .threads = args.model.threads,
                    .verbose = args.verbose, .progress = ProgressWanted(args.quiet)});
  if (!planned) return kExitNoFeasibleSchedule;

  exec::Network network(model.info, args.model.seed);
  const exec::TrainReport report =
      exec::Train(network, graph, BuildPlan(graph, planned->schedule),
                  BuildPlan(graph, no_remat.schedule), args.options);
  const exec::StepResult& peak = report.peak_step;
  const bool failed = report.gradients_match.has_value() && !*report.gradients_match;
  const TrainOutcome outcome{
      .graph = graph, .planned = *planned, .no_remat = no_remat, .fixed = fixed,
      .budget_bytes = budget_bytes, .report = report, .strategy = RunStrategyName(args.strategy),
      .transient_node = peak.largest_transient_node < 0
                            ? std::string()
                            : graph.node(peak.largest_transient_node).name};
  if (args.json) {
    PrintJson(args, outcome);
  } else {
    PrintTable(args, outcome);
  }
  return failed ? kExitInternal : kExitOk;
}

}  // namespace

void AddRunTrainCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* train = app.add_subcommand("train", "plan, then train K SGD steps under the plan");
  AddRunModelOptions(*train, args->model);
  AddWorkspaceOption(*train, args->model.zoo.workspace, "cpu, what remat-run executes on");
  CLI::Option* memory = train->add_option(
      "--memory", args->memory, "device memory (e.g. 2GiB): the budget is memory - fixed memory");
  CLI::Option* budget = train->add_option(
      "--budget", args->budget, "activation budget: a size (e.g. 300MiB) or P% of the no-remat peak");
  memory->excludes(budget);
  train->add_option("--strategy", args->strategy,
                    "a strategy of remat solve (checkpoint-all, chen-sqrtn, optimal, ...)")
      ->required();
  train->add_option("--steps", args->options.steps, "SGD steps")
      ->required()
      ->check(CLI::Range(1, 1000000));
  train->add_option("--learning-rate", args->options.learning_rate, "SGD learning rate")
      ->capture_default_str()
      ->check(FiniteRange(0.0, 1e6));
  train->add_flag("--check-gradients", args->options.check_gradients,
                  "compare every step's gradients with plain autograd");
  train->add_option("--costs", args->costs_path,
                    "plan with a cost profile of `remat-run profile` (milliseconds and "
                    "workspace bytes)");
  train->add_option("--time-limit", args->time_limit_s, "wall-clock seconds for planning")
      ->capture_default_str()
      ->check(FiniteRange(0.001, 1e7));
  train->add_flag("--measured-workspace", args->measured_workspace, kMeasuredWorkspaceHelp)
      ->excludes("--costs");
  train->add_flag("--verbose", args->verbose, "solver logs on stderr");
  train->add_flag("--quiet", args->quiet, "no progress line on stderr");
  train->add_flag("--json", args->json, "machine-readable output (schema remat.run-train/1)");
  train->callback([args, &exit_code] { exit_code = RunTrain(*args); });
}

}  // namespace remat
