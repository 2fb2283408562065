// Training with a rematerialization plan: K SGD steps of a Network that each follow the plan,
// timed against the no-rematerialization plan on the same weights, optionally checked against
// plain autograd before every update.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/graph.h"
#include "core/plan.h"
#include "exec/executor.h"
#include "exec/network.h"

namespace remat::exec {

struct TrainOptions {
  int32_t steps = 1;
  double learning_rate = 0.001;  // plain SGD: w -= lr * dL/dw
  bool check_gradients = false;  // compare every step's gradients with AutogradStep
};

struct TrainStepRecord {
  double loss = 0;                // the step's loss before its update
  double seconds = 0;             // the plan's step (compute, free) only
  double no_remat_seconds = 0;    // the no-remat plan on the same weights, just before it
  int64_t measured_peak_bytes = 0;
  // Set when gradients are checked: the largest |difference| from autograd, bitwise equality.
  std::optional<double> max_abs_gradient_diff;
  std::optional<bool> gradients_match;          // GradientsAgree (executor.h)
  std::optional<bool> gradients_bitwise_equal;  // the stricter test
};

struct TrainReport {
  std::vector<TrainStepRecord> steps;
  StepResult peak_step;  // the plan's step with the largest measured peak (and its transients)
  int64_t no_remat_measured_peak_bytes = 0;
  double median_seconds = 0;        // medians over the steps
  double median_no_remat_seconds = 0;
  // The geometric mean over the steps of the plan's time over the no-remat plan's time in the
  // same step (0 without steps). The two run in alternating order, so over an even number of
  // steps this cancels an effect of running first or second (seen on the 2-core machine,
  // docs/exec.md), which a ratio of medians kept.
  double measured_overhead() const;
  // Over every step; empty when gradients were not checked.
  std::optional<double> max_abs_gradient_diff;
  std::optional<bool> gradients_match;          // GradientsAgree (executor.h)
  std::optional<bool> gradients_bitwise_equal;  // the stricter test
};

// Runs `options.steps` training steps of `network` under `plan` (a plan of `graph`). Each step
// first runs `no_remat_plan` on the same weights for its time and peak (batch-norm running
// statistics are restored after it, so they advance once per step), then the plan, then the
// autograd check if asked, then the SGD update. Step k uses dropout seed k + 1. One untimed
// run of each plan comes first (warm-up; it changes no weights or statistics).
TrainReport Train(Network& network, const Graph& graph, const Plan& plan,
                  const Plan& no_remat_plan, const TrainOptions& options);

}  // namespace remat::exec
