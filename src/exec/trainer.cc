// The training loop of `remat-run train`.
#include "exec/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/errors.h"
#include "exec/cost_comparison.h"

namespace remat::exec {
namespace {

// Batch-norm running statistics, so that a step run only for timing leaves them unchanged.
std::vector<at::Tensor> SaveRunningStatistics(const Network& network) {
  std::vector<at::Tensor> saved;
  for (int32_t id = 0; id < network.size(); ++id) {
    const LayerTensors& t = network.tensors(id);
    for (const at::Tensor* s : {&t.running_mean, &t.running_var}) {
      saved.push_back(s->defined() ? s->clone() : at::Tensor());
    }
  }
  return saved;
}

void RestoreRunningStatistics(Network& network, const std::vector<at::Tensor>& saved) {
  size_t k = 0;
  for (int32_t id = 0; id < network.size(); ++id) {
    LayerTensors& t = network.tensors(id);
    for (at::Tensor* s : {&t.running_mean, &t.running_var}) {
      if (s->defined()) s->copy_(saved[k]);
      ++k;
    }
  }
}

void RestoreGradients(Network& network, const std::vector<std::vector<at::Tensor>>& saved) {
  for (int32_t id = 0; id < network.size(); ++id) {
    std::vector<at::Tensor>& gradients = network.gradients(id);
    for (size_t p = 0; p < gradients.size(); ++p) gradients[p].copy_(saved[id][p]);
  }
}

void SgdUpdate(Network& network, double learning_rate) {
  for (int32_t id = 0; id < network.size(); ++id) {
    std::vector<at::Tensor> parameters = network.parameters(id);
    const std::vector<at::Tensor>& gradients = network.gradients(id);
    if (parameters.size() != gradients.size()) {
      throw InternalError(fmt::format("layer {} has {} parameters but {} gradients", id,
                                      parameters.size(), gradients.size()));
    }
    for (size_t p = 0; p < parameters.size(); ++p) parameters[p].add_(gradients[p], -learning_rate);
  }
}

}  // namespace

double TrainReport::measured_overhead() const {
  double log_sum = 0;
  for (const TrainStepRecord& step : steps) {
    if (!(step.seconds > 0) || !(step.no_remat_seconds > 0)) return 0;
    log_sum += std::log(step.seconds / step.no_remat_seconds);
  }
  return steps.empty() ? 0 : std::exp(log_sum / static_cast<double>(steps.size()));
}

TrainReport Train(Network& network, const Graph& graph, const Plan& plan,
                  const Plan& no_remat_plan, const TrainOptions& options) {
  if (options.steps < 1) throw InputError("--steps must be at least 1");
  Executor executor(network, graph);
  TrainReport report;
  std::vector<double> seconds, no_remat_seconds;
  {
    // One untimed run of each plan first, so that one-time costs (first-touch page faults,
    // oneDNN primitive creation) fall on neither side of the measured overhead.
    const std::vector<at::Tensor> statistics = SaveRunningStatistics(network);
    executor.Run(no_remat_plan, 1);
    executor.Run(plan, 1);
    RestoreRunningStatistics(network, statistics);
  }
  for (int32_t k = 0; k < options.steps; ++k) {
    const uint64_t seed = static_cast<uint64_t>(k) + 1;
    TrainStepRecord record;

    // The timing run and the step alternate in order, so that neither always runs first
    // after the update (cold caches, freshly mapped pages).
    const auto run_baseline = [&] {
      const std::vector<at::Tensor> statistics = SaveRunningStatistics(network);
      const StepResult baseline = executor.Run(no_remat_plan, seed);
      RestoreRunningStatistics(network, statistics);
      record.no_remat_seconds = baseline.seconds;
      report.no_remat_measured_peak_bytes =
          std::max(report.no_remat_measured_peak_bytes, baseline.measured_peak_bytes);
    };
    const bool baseline_first = k % 2 == 0;
    if (baseline_first) run_baseline();
    const StepResult step = executor.Run(plan, seed);  // zeroes and fills the gradients
    if (!baseline_first) {
      const auto gradients = CopyGradients(network);
      run_baseline();  // overwrites the gradients with equal ones; the step's are restored
      RestoreGradients(network, gradients);
    }
    record.loss = step.loss;
    record.seconds = step.seconds;
    record.measured_peak_bytes = step.measured_peak_bytes;

    if (options.check_gradients) {
      const ReferenceStep reference = AutogradStep(network, seed);
      const GradientComparison cmp = CompareGradients(CopyGradients(network), reference.gradients);
      record.max_abs_gradient_diff = cmp.max_abs_diff;
      record.gradients_match = GradientsAgree(cmp);
      record.gradients_bitwise_equal = cmp.bitwise_equal;
      report.max_abs_gradient_diff = std::max(report.max_abs_gradient_diff.value_or(0.0),
                                              cmp.max_abs_diff);
      report.gradients_match = report.gradients_match.value_or(true) && *record.gradients_match;
      report.gradients_bitwise_equal =
          report.gradients_bitwise_equal.value_or(true) && cmp.bitwise_equal;
    }
    SgdUpdate(network, options.learning_rate);

    seconds.push_back(record.seconds);
    no_remat_seconds.push_back(record.no_remat_seconds);
    report.steps.push_back(record);
    if (report.steps.size() == 1 || step.measured_peak_bytes > report.peak_step.measured_peak_bytes) {
      report.peak_step = step;
    }
  }
  report.median_seconds = Median(seconds);
  report.median_no_remat_seconds = Median(no_remat_seconds);
  return report;
}

}  // namespace remat::exec
