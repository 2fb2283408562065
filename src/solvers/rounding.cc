// Deterministic and randomized rounding of the LP relaxation (docs/design.md §5, paper §5).
#include "solvers/rounding.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <climits>
#include <random>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/recompute.h"
#include "solvers/clp_lp.h"
#include "solvers/lower_bound.h"

namespace remat {
namespace {

// The given relaxation when it was solved for this budget and eps, else a new solve.
std::shared_ptr<const Relaxation> Shared(const Graph& graph, int64_t budget_bytes, double eps,
                                         const LpOptions& lp,
                                         const std::shared_ptr<const Relaxation>& given);

// An infeasible LP at the reduced budget proves nothing about the budget itself: rounding
// then has no solution, which is not the proof `infeasible` stands for.
OptimizerResult Empty(const std::string& strategy, const Relaxation& relaxation) {
  OptimizerResult result;
  result.strategy = strategy;
  result.full_size = relaxation.model.full_size;
  result.size = relaxation.model.size;
  result.solve_time_s = relaxation.out.seconds;
  // At the budget itself an infeasible LP does prove that no schedule fits.
  const bool reduced = relaxation.lp_budget_bytes < relaxation.budget_bytes;
  result.status = relaxation.out.status == SolveStatus::kInfeasible && reduced
                      ? SolveStatus::kNoSolution
                      : relaxation.out.status;
  result.message = relaxation.out.message;
  if (!relaxation.note.empty()) {
    result.message = relaxation.note + (result.message.empty() ? "" : "; " + result.message);
  }
  return result;
}

void Keep(OptimizerResult& result, StrategyResult candidate) {
  if (!result.schedule || IsBetter(candidate, *result.schedule)) {
    result.schedule = std::move(candidate);
  }
}

// A rounded schedule that fits is a feasible (not proven optimal) answer.
void Finish(OptimizerResult& result) {
  if (result.status != SolveStatus::kOptimal) return;
  result.status = result.schedule && result.schedule->status == FitStatus::kFits
                      ? SolveStatus::kFeasible
                      : SolveStatus::kNoSolution;
  if (result.status == SolveStatus::kNoSolution) {
    result.message = "no rounding fits the budget" +
                     (result.message.empty() ? "" : "; " + result.message);
  }
}

std::shared_ptr<const Relaxation> Shared(const Graph& graph, int64_t budget_bytes, double eps,
                                         const LpOptions& lp,
                                         const std::shared_ptr<const Relaxation>& given) {
  if (given && given->budget_bytes == budget_bytes && given->eps == eps &&
      given->model.stages() == graph.size()) {
    return given;
  }
  return SolveRelaxation(graph, budget_bytes, eps, lp);
}

}  // namespace

std::shared_ptr<const Relaxation> SolveRelaxation(const Graph& graph, int64_t budget_bytes,
                                                  double eps, const LpOptions& options) {
  if (!(eps >= 0 && eps < 1)) {
    throw InputError(fmt::format("rounding allowance eps must be in [0, 1), got {}", eps));
  }
  const auto reduced = static_cast<int64_t>(std::floor((1.0 - eps) * static_cast<double>(budget_bytes)));
  const int64_t columns = EstimateCheckmateColumns(graph);
  if (!LpFitsTime(columns, options.time_limit_s)) {
    auto skipped = std::make_shared<Relaxation>();
    skipped->budget_bytes = budget_bytes;
    skipped->eps = eps;
    skipped->out.status = SolveStatus::kTimeLimitNoSolution;
    skipped->out.message = fmt::format("LP skipped: its model has about {} columns, too many for "
                                      "{:.0f} s",
                                      columns, options.time_limit_s);
    skipped->model.full_size.columns = static_cast<int32_t>(std::min<int64_t>(columns, INT32_MAX));
    return skipped;
  }
  const auto begin = std::chrono::steady_clock::now();
  auto relaxation = std::make_shared<Relaxation>();
  relaxation->budget_bytes = budget_bytes;
  relaxation->eps = eps;
  // Solves the LP at `lp_budget` into `relaxation`.
  auto solve_at = [&](int64_t lp_budget) {
    relaxation->lp_budget_bytes = lp_budget;
    relaxation->model = BuildCheckmateModel(graph, lp_budget, {.integer = false});
    relaxation->out = {};
    if (relaxation->model.proven_infeasible) {
      relaxation->out.status = SolveStatus::kInfeasible;
      relaxation->out.message = "some node and its inputs alone exceed the LP's budget";
      return;
    }
    LpOptions lp = options;  // building the model counts against the limit
    lp.time_limit_s = std::max(0.1, options.time_limit_s -
                                        std::chrono::duration<double>(
                                            std::chrono::steady_clock::now() - begin).count());
    relaxation->out = SolveLpWithClp(relaxation->model.lp, lp);
  };
  // Below the minimum peak no schedule fits, so the reduced LP would be infeasible: the room
  // for rounding is then taken from the budget itself, which may still hold a schedule.
  const int64_t min_peak = MinimumPeakLowerBound(graph);
  if (reduced < min_peak && min_peak <= budget_bytes) {
    relaxation->note = fmt::format("(1 - {}) of the budget is below the minimum peak {} B: the "
                                   "LP saw the budget itself",
                                   eps, min_peak);
    solve_at(budget_bytes);
    return relaxation;
  }
  solve_at(reduced);
  if (relaxation->out.status == SolveStatus::kInfeasible && reduced < budget_bytes) {
    relaxation->note = fmt::format("the LP is infeasible at (1 - {}) of the budget: it saw the "
                                   "budget itself",
                                   eps);
    solve_at(budget_bytes);
  }
  return relaxation;
}

OptimizerResult SolveApproxDeterministic(const Graph& graph, int64_t budget_bytes,
                                         const RoundingOptions& options) {
  const std::shared_ptr<const Relaxation> shared = Shared(graph, budget_bytes, options.eps,
                                                          options.lp, options.relaxation);
  const Relaxation& relaxation = *shared;
  OptimizerResult result = Empty("approx", relaxation);
  if (relaxation.out.status != SolveStatus::kOptimal) {
    if (relaxation.out.status == SolveStatus::kInfeasible) {
      result.message = relaxation.lp_budget_bytes < budget_bytes
                           ? fmt::format("the LP is infeasible at (1 - {}) of the budget",
                                         options.eps)
                           : relaxation.note + "; the LP is infeasible at the budget itself too";
    }
    return result;
  }
  for (double theta : options.thresholds) {
    Keep(result, DecodeSchedule(graph, relaxation.model, relaxation.out.values, theta,
                                budget_bytes, "approx",
                                fmt::format("deterministic rounding, eps {}, theta {}",
                                            options.eps, theta)));
  }
  Finish(result);
  return result;
}

OptimizerResult SolveApproxRandomized(const Graph& graph, int64_t budget_bytes,
                                      const RandomizedRoundingOptions& options) {
  const std::shared_ptr<const Relaxation> shared = Shared(graph, budget_bytes, options.eps,
                                                          options.lp, options.relaxation);
  const Relaxation& relaxation = *shared;
  OptimizerResult result = Empty("approx-randomized", relaxation);
  if (relaxation.out.status != SolveStatus::kOptimal) return result;
  const CheckmateModel& model = relaxation.model;
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const int32_t n = graph.size();
  for (int32_t round = 0; round < options.rounds; ++round) {
    StageMatrix S(n, n);
    for (int32_t t = 1; t < n; ++t) {
      for (int32_t i = 0; i < t; ++i) {
        const int32_t column = model.S(t, i);
        if (column == CheckmateModel::kAbsent) continue;
        // Every cell draws, even at 0 or 1, so the stream does not depend on the LP values.
        if (uniform(rng) < relaxation.out.values[column]) S.Set(t, i);
      }
    }
    Keep(result, EvaluateSchedule(graph, "approx-randomized",
                                  ScheduleFromCheckpoints(graph, std::move(S)), budget_bytes,
                                  fmt::format("randomized rounding, eps {}, seed {}, best of {}",
                                              options.eps, options.seed, options.rounds)));
  }
  Finish(result);
  return result;
}

}  // namespace remat
