// The smallest budget: heuristics bisected over budgets, window repair below the best peak,
// and the LP relaxation's infeasibility bisected for a certified bound.
#include "planning/min_budget.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/cancellation.h"
#include "core/recompute.h"
#include "core/stage_matrix.h"
#include "core/sizes.h"
#include "solvers/cbc_mip.h"
#include "solvers/checkmate_model.h"
#include "solvers/checkmate_solver.h"
#include "solvers/lower_bound.h"
#include "solvers/window_search.h"
#include "strategies/best_heuristic.h"
#include "strategies/checkpoint_all.h"
#include "strategies/eviction.h"
#include "strategies/registry.h"

namespace remat {
namespace {

using Clock = std::chrono::steady_clock;

// Budgets closer than this share of the peak are not told apart by the searches.
constexpr double kResolution = 1e-4;

// Whether an LP or MILP of `columns` may be tried in `seconds`: the solvers keep their own
// time limits, so a try that does not finish costs only this phase's time (hence the factor).
bool WorthTrying(int64_t columns, double seconds) {
  return seconds >= 0.5 && LpFitsTime(columns, 10 * seconds);
}

// The share of the time limit the pending-set bound may deepen for.
constexpr double kPendingSetShare = 0.25;

// The largest graph on which the hold-nothing schedule (n^2 recomputations) is tried.
constexpr int32_t kHoldNothingMaxNodes = 3000;

bool Close(int64_t lo, int64_t hi) {
  return hi - lo <= std::max<int64_t>(1, static_cast<int64_t>(kResolution * static_cast<double>(hi)));
}

}  // namespace

double MinBudget::gap() const {
  if (peak_bytes <= 0) return 0;
  return static_cast<double>(std::max<int64_t>(0, peak_bytes - lower_bound_bytes)) /
         static_cast<double>(peak_bytes);
}

MinBudget FindMinimumBudget(const Graph& graph, const MinBudgetOptions& options) {
  const auto begin = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - begin).count(); };
  // The search's deadline (core/cancellation.h): each step below that is still building or
  // simulating a schedule there abandons it, and the steps after it find no time left.
  const DeadlineScope deadline(options.time_limit_s);
  auto left = [&] { return std::min(SecondsLeft(), options.time_limit_s - elapsed()); };
  std::vector<std::string> notes;
  auto stoppable = [&](const std::function<void()>& step) {
    try {
      step();
    } catch (const TimeLimitReached&) {
      notes.push_back("a step stopped at the time limit");
    }
  };
  MinBudget result;
  result.lower_bound_bytes = MinimumPeakLowerBound(graph);
  result.bound_source = "a node and its inputs";
  if (const int64_t last_input = LastInputPeakLowerBound(graph);
      last_input > result.lower_bound_bytes) {
    result.lower_bound_bytes = last_input;
    result.bound_source = "a node's inputs while the last of them is computed";
  }
  // 0. The pending-set game, deepened while a share of the time lasts.
  {
    const PendingSetBound game = PendingSetPeakLowerBound(
        graph, {.time_limit_s = kPendingSetShare * options.time_limit_s});
    if (game.bytes > result.lower_bound_bytes) {
      result.lower_bound_bytes = game.bytes;
      // A search stopped at its time may have proved more one step deeper.
      result.bound_source =
          fmt::format("pending sets, {} steps deep", game.depth + (game.timed_out ? 1 : 0));
    }
    notes.push_back(fmt::format("pending-set bound {} steps deep{} ({:.1f} s)", game.depth,
                                game.timed_out ? ", stopped at its time" : "", elapsed()));
  }
  // Every schedule counts by its own peak; among equal peaks the cheaper is kept. The search's
  // answer when nothing else is found: computed whole, whatever the time.
  {
    const DeadlineScope whole(std::numeric_limits<double>::infinity(), /*stoppable=*/false);
    result.schedule = CheckpointAll(graph, std::numeric_limits<int64_t>::max());
  }
  result.found_by = "no rematerialization";
  auto consider = [&](const StrategyResult& r, const std::string& how) {
    if (r.peak_bytes < result.schedule.peak_bytes ||
        (r.peak_bytes == result.schedule.peak_bytes && r.cost < result.schedule.cost)) {
      result.schedule = r;
      result.found_by = how;
    }
  };
  auto best_peak = [&] { return result.schedule.peak_bytes; };
  // The other extreme: nothing held from one stage to the next, every stage recomputing what
  // it needs (quadratic work, so only on graphs where that stays cheap).
  if (graph.size() <= kHoldNothingMaxNodes) {
    stoppable([&] {
    consider(EvaluateSchedule(graph, "hold nothing",
                              ScheduleFromCheckpoints(graph, StageMatrix(graph.size(), graph.size())),
                              std::numeric_limits<int64_t>::max(), "no value held across stages"),
             "holding nothing across stages");
    });
  }

  // 1. The baselines asked for the least budget (the bound): each returns its lowest-peak
  // choice when none fits (Griewank's fewest slots, Chen's densest segments), then eviction
  // bisected over budgets: a fit lowers the top to its peak, a miss raises the floor of the
  // search (not of the bound: a heuristic's miss proves nothing).
  int32_t tries = 0;
  stoppable([&] {
    const DeadlineScope baselines(left() - 0.8 * options.time_limit_s);
    for (const StrategySpec& spec : BaselineStrategies()) {
      if (DeadlinePassed()) break;
      if (!spec.applies(graph)) continue;
      consider(spec.run(graph, result.lower_bound_bytes),
               fmt::format("{} asked for {} B", spec.name, result.lower_bound_bytes));
      ++tries;
    }
  });
  stoppable([&] {
    int64_t lo = result.lower_bound_bytes;
    while (!Close(lo, best_peak()) && left() > 0.7 * options.time_limit_s) {
      const int64_t mid = lo + (best_peak() - lo) / 2;
      const StrategyResult r = Evict(graph, mid, {.time_limit_s = std::max(0.05, left() * 0.1)});
      ++tries;
      consider(r, fmt::format("evict at a budget of {} B", mid));
      if (r.peak_bytes > mid) lo = mid + 1;
    }
    // Local search just below the best peak may still find a lower one.
    if (left() > 0.6 * options.time_limit_s && best_peak() > result.lower_bound_bytes) {
      const int64_t below = std::max(result.lower_bound_bytes, best_peak() - 1);
      consider(BestHeuristic(graph, below, {.time_limit_s = std::max(0.05, left() * 0.1)}),
               fmt::format("local-search at a budget of {} B", below));
      ++tries;
    }
  });
  notes.push_back(fmt::format("{} baseline and heuristic runs ({:.1f} s)", tries, elapsed()));

  // 2. The bound: the LP relaxation is infeasible below some budget; bisect for it while its
  // model fits the time (a third of what is left).
  {
    const double bound_until = elapsed() + left() / 3;
    const int64_t columns = EstimateCheckmateColumns(graph);
    int32_t solves = 0;
    int64_t lo = result.lower_bound_bytes;
    int64_t hi = best_peak();  // the LP is feasible where a schedule fits
    std::string stopped;
    while (!Close(lo, hi)) {
      const double budget_s = bound_until - elapsed();
      if (CancelRequested() || !WorthTrying(columns, budget_s)) {
        stopped = solves == 0 ? fmt::format("; LP bound skipped: about {} columns, too many for "
                                            "{:.0f} s",
                                            columns, std::max(0.0, budget_s))
                              : "; LP bisection stopped at its time";
        break;
      }
      const int64_t mid = lo + (hi - lo) / 2;
      const LowerBound lp = LpLowerBound(graph, mid, {.time_limit_s = budget_s});
      ++solves;
      if (lp.status == SolveStatus::kInfeasible) {
        lo = mid + 1;
        result.lower_bound_bytes = std::max(result.lower_bound_bytes, mid + 1);
        result.bound_source = fmt::format("LP relaxation infeasible at {} B", mid);
      } else if (lp.status == SolveStatus::kOptimal) {
        hi = mid;
      } else {
        stopped = fmt::format("; LP bisection stopped: {}", SolveStatusPhrase(lp.status));
        break;
      }
    }
    notes.push_back(fmt::format("{} LP solves bisected for the bound{}", solves, stopped));
  }

  // 3. The MILP itself decides budgets exactly on models small enough: bisected between the
  // bound and the best peak, a solution is a schedule peaking lower, a proof of infeasibility a
  // higher bound. It stops at the first budget it cannot decide in its time.
  stoppable([&] {
    const int64_t columns = EstimateCheckmateColumns(graph);
    int32_t solves = 0, found = 0, proven = 0;
    std::string stopped;
    const double milp_until = elapsed() + 0.6 * left();
    while (!Close(result.lower_bound_bytes, best_peak())) {
      const double budget_s = milp_until - elapsed();
      if (CancelRequested() || !WorthTrying(columns, budget_s)) {
        if (solves == 0) stopped = "; MILP skipped: its model is too large for the time left";
        break;
      }
      const int64_t mid = result.lower_bound_bytes + (best_peak() - result.lower_bound_bytes) / 2;
      const CheckmateModel model = BuildCheckmateModel(graph, mid, {.integer = true});
      ++solves;
      if (model.proven_infeasible) {
        ++proven;
        result.lower_bound_bytes = mid + 1;
        result.bound_source = fmt::format("the MILP is infeasible at {} B", mid);
        continue;
      }
      // Any solution answers the question: stop at the first one.
      const SolverOutput out = SolveMipWithCbc(
          model.lp, {},
          {.time_limit_s = 0.9 * budget_s, .hard_deadline_s = budget_s, .threads = options.threads,
           .stop_at_objective = std::numeric_limits<double>::infinity()});
      if (out.status == SolveStatus::kInfeasible) {
        ++proven;
        result.lower_bound_bytes = mid + 1;
        result.bound_source = fmt::format("the MILP is infeasible at {} B", mid);
      } else if (!out.values.empty()) {
        const StrategyResult decoded = DecodeSchedule(graph, model, out.values, 0.5, mid, "optimal",
                                                      "a MILP solution");
        if (decoded.status != FitStatus::kFits) break;  // cannot happen: the simulator agrees
        ++found;
        consider(decoded, fmt::format("the MILP at a budget of {} B", mid));
      } else {
        stopped = fmt::format("; MILP stopped undecided at {} B ({})", mid,
                              SolveStatusPhrase(out.status));
        break;
      }
    }
    if (solves > 0 || !stopped.empty()) {
      notes.push_back(fmt::format("{} MILP solves bisected ({} schedules, {} proofs){}", solves,
                                  found, proven, stopped));
    }
  });

  // 4. Window repair on the elastic model at budgets below the best peak: a repaired schedule
  // fits a budget no heuristic reached. The target halves the distance to the bound each time.
  stoppable([&] {
    int32_t repairs = 0, repaired = 0;
    int64_t lo = result.lower_bound_bytes;
    // A repair needs more than a second (RepairByWindows keeps one in reserve).
    while (!Close(lo, best_peak()) && left() > 2.5) {
      const int64_t target = lo + (best_peak() - lo) / 2;
      StrategyResult over = result.schedule;  // over the target, which is below its peak
      over.status = FitStatus::kOverBudget;
      const RepairResult r = RepairByWindows(
          graph, target, over,
          {.time_limit_s = std::min(left(), std::max(2.5, left() / 3)), .threads = options.threads});
      ++repairs;
      if (r.fitting && r.fitting->status == FitStatus::kFits && r.fitting->peak_bytes <= target) {
        ++repaired;
        consider(*r.fitting, fmt::format("window repair at a budget of {} B", target));
      } else {
        lo = target + 1;  // the search's floor, not a bound
      }
    }
    notes.push_back(fmt::format("{} window repairs below the best peak, {} fitted", repairs,
                                repaired));
  });
  result.peak_bytes = result.schedule.peak_bytes;
  result.lower_bound_bytes = std::min(result.lower_bound_bytes, result.peak_bytes);
  result.schedule.status = FitStatus::kFits;  // at its own peak, the smallest budget found
  result.schedule.parameters = result.found_by + "; " + result.schedule.parameters;
  result.schedule.strategy = "the smallest-budget search";
  result.note = fmt::format("{}", fmt::join(notes, "; "));
  result.seconds = elapsed();
  return result;
}

}  // namespace remat
