// remat-run step: one training step following a plan, checked against plain autograd.
#include "cli/run_step_command.h"

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
#include "core/schedule_json.h"
#include "core/sizes.h"
#include "core/training_graph.h"
#include "exec/counting_allocator.h"
#include "exec/executor.h"
#include "exec/network.h"

namespace remat {
namespace {

using exec::CountingAllocator;

struct StepArgs {
  RunModelArgs model;
  std::string schedule_path;
  std::string strategy = "checkpoint-all";
  std::string budget;
  bool allow_over_budget = false;
  bool measured_workspace = false;
  double time_limit_s = 60;
  bool verbose = false;
  bool quiet = false;
  bool json = false;
};

// The step's outcome: JSON (remat.run-step/1) or lines for people.
void PrintStep(const StepArgs& args, const Graph& graph, const std::string& name,
               const exec::StepResult& step, const exec::ReferenceStep& reference,
               const exec::GradientComparison& cmp, const exec::Network& network) {
  const bool agree = exec::GradientsAgree(cmp);
  const int64_t fixed = network.parameter_bytes() + network.gradient_bytes() + network.input_bytes();
  const std::string transient_node = step.largest_transient_node < 0
                                         ? std::string()
                                         : graph.node(step.largest_transient_node).name;
  if (args.json) {
    const nlohmann::json out = {
        {"schema", "remat.run-step/1"}, {"model", args.model.zoo.model}, {"graph", graph.name()},
        {"strategy", name}, {"threads", args.model.threads}, {"loss", step.loss},
        {"autograd_loss", reference.loss}, {"gradients_match", agree},
        {"gradients_bitwise_equal", cmp.bitwise_equal},
        {"max_abs_gradient_diff", cmp.max_abs_diff},
        {"predicted_peak_bytes", step.predicted_peak_bytes},
        {"predicted_tensor_peak_bytes", step.predicted_tensor_peak_bytes},
        {"tensor_peak_bytes", step.tensor_peak_bytes},
        {"measured_peak_bytes", step.measured_peak_bytes},
        {"fixed_bytes", fixed}, {"allocator_fixed_bytes", step.fixed_bytes},
        {"largest_transient_bytes", step.largest_transient_bytes},
        {"largest_transient_node", transient_node},
        {"evaluations", step.evaluations}, {"recomputations", step.recomputations},
        {"step_seconds", step.seconds}};
    fmt::print("{}\n", out.dump(1));
  } else {
    PrintWrapped(fmt::format("{} under {}: loss {:.9g} (autograd {:.9g})", graph.name(), name,
                             step.loss, reference.loss));
    PrintWrapped(fmt::format("gradients vs autograd: {} (max |diff| {:.3g}, bitwise equal: {})",
                             agree ? "match" : "DO NOT match", cmp.max_abs_diff,
                             cmp.bitwise_equal ? "yes" : "no"));
    PrintWrapped(fmt::format("activation peak: predicted {}, held tensors {}, measured {} ({} "
                             "transients)",
                             FormatBytes(step.predicted_peak_bytes),
                             FormatBytes(step.tensor_peak_bytes),
                             FormatBytes(step.measured_peak_bytes),
                             FormatBytesDifference(step.measured_peak_bytes -
                                                   step.predicted_peak_bytes)));
    if (!transient_node.empty()) {
      PrintWrapped(fmt::format("largest transient: {} in node {} ({})",
                               FormatBytes(step.largest_transient_bytes),
                               step.largest_transient_node, transient_node));
    }
    PrintWrapped(fmt::format("fixed memory: {} (parameters and statistics {}, gradients {}, "
                             "input and labels {})",
                             FormatBytes(fixed), FormatBytes(network.parameter_bytes()),
                             FormatBytes(network.gradient_bytes()),
                             FormatBytes(network.input_bytes())));
    PrintWrapped(fmt::format("evaluations {} ({} recomputations), step {:.3f} s on {} thread(s)",
                             step.evaluations, step.recomputations, step.seconds,
                             args.model.threads));
  }
}

int RunStep(const StepArgs& args) {
  at::set_num_threads(args.model.threads);
  CountingAllocator::Install();
  const BuiltModel model = BuildRunModel(args.model);
  Graph graph = BuildTrainingGraph(model.forward);
  if (args.measured_workspace) {
    std::string note;
    graph = WithMeasuredWorkspace(graph, model.info, args.model.seed, args.model.threads, note);
    if (!args.quiet) fmt::print(stderr, "remat-run: workspace {}\n", note);
  }
  Schedule schedule;
  std::string name = RunStrategyName(args.strategy);
  if (!args.schedule_path.empty()) {
    ScheduleDocument document = LoadScheduleFile(args.schedule_path);
    if (!args.allow_over_budget) {
      CheckScheduleWithinBudget(document, args.schedule_path, "--allow-over-budget");
    }
    if (StructureFingerprint(document.graph) != StructureFingerprint(graph)) {
      throw InputError(fmt::format("{}: the schedule was made for another graph than {}",
                                   args.schedule_path, graph.name()));
    }
    schedule = std::move(document.schedule);
    name = document.info.strategy;
  } else {
    const int64_t budget_bytes =
        args.budget.empty() ? std::numeric_limits<int64_t>::max()
                            : ParseBytes(args.budget, "--budget", NoRematPeakBytes(graph));
    std::optional<StrategyResult> result =
        PlanStrategy(args.strategy, graph, budget_bytes,
                     {.time_limit_s = args.time_limit_s, .threads = args.model.threads,
                      .verbose = args.verbose, .progress = ProgressWanted(args.quiet)});
    if (!result) return kExitNoFeasibleSchedule;
    schedule = std::move(result->schedule);
  }
  exec::Network network(model.info, args.model.seed);
  exec::Executor executor(network, graph);
  const exec::StepResult step = executor.Run(BuildPlan(graph, schedule));
  const auto gradients = exec::CopyGradients(network);
  const exec::ReferenceStep reference = exec::AutogradStep(network);
  const exec::GradientComparison cmp = exec::CompareGradients(gradients, reference.gradients);
  const bool agree = exec::GradientsAgree(cmp);
  PrintStep(args, graph, name, step, reference, cmp, network);
  return agree ? kExitOk : kExitInternal;
}

}  // namespace

void AddRunStepCommand(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<StepArgs>();
  CLI::App* step = app.add_subcommand("step", "run one training step following a plan");
  AddRunModelOptions(*step, args->model);
  AddWorkspaceOption(*step, args->model.zoo.workspace, "cpu, what remat-run executes on");
  // A schedule file fixes the plan: --strategy and --budget would be silently ignored, so
  // they are refused with it (exit 2).
  CLI::Option* schedule_opt = step->add_option("--schedule", args->schedule_path,
                                               "schedule JSON made for the same graph");
  step->add_flag("--allow-over-budget", args->allow_over_budget,
                 "run a --schedule whose peak is over the budget it records")
      ->needs(schedule_opt);
  step->add_option("--strategy", args->strategy,
                   "a strategy of remat solve (checkpoint-all, chen-sqrtn, optimal, ...)")
      ->capture_default_str()
      ->excludes(schedule_opt);
  step->add_option("--budget", args->budget,
                   "activation budget: a size (e.g. 300MiB) or P% of the no-remat peak")
      ->excludes(schedule_opt);
  step->add_option("--time-limit", args->time_limit_s, "wall-clock seconds for planning")
      ->capture_default_str()
      ->check(FiniteRange(0.001, 1e7))
      ->excludes(schedule_opt);
  step->add_flag("--measured-workspace", args->measured_workspace, kMeasuredWorkspaceHelp);
  step->add_flag("--verbose", args->verbose, "solver logs on stderr");
  step->add_flag("--quiet", args->quiet, "no progress line on stderr");
  step->add_flag("--json", args->json, "machine-readable output (schema remat.run-step/1)");
  step->callback([args, &exit_code] { exit_code = RunStep(*args); });
}

}  // namespace remat
