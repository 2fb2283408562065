// Window search: re-optimize a window of stages exactly with the rest of the schedule fixed.
#include "solvers/window_search.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "core/cancellation.h"
#include "core/recompute.h"
#include "core/simulator.h"
#include "solvers/cbc_mip.h"

namespace remat {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Recomputation cost per stage: the cost of every node computed in stage t other than t.
std::vector<double> RecomputationCost(const Graph& graph, const Schedule& schedule) {
  std::vector<double> cost(static_cast<size_t>(graph.size()), 0.0);
  const std::vector<std::vector<int32_t>> rows = schedule.R.Rows();
  for (int32_t t = 0; t < graph.size(); ++t) {
    for (int32_t i : rows[t]) {
      if (i != t) cost[t] += graph.node(i).cost;
    }
  }
  return cost;
}

// One window per centre, grown alternately to the left and right while the next stage still
// fits in `columns`; duplicates dropped.
std::vector<StageWindow> WindowsAround(const std::vector<int32_t>& centres,
                                       const std::vector<int64_t>& per_stage, int64_t columns) {
  const int32_t n = static_cast<int32_t>(per_stage.size());
  std::vector<StageWindow> windows;
  std::set<std::pair<int32_t, int32_t>> seen;
  for (int32_t centre : centres) {
    StageWindow w{centre, centre};
    int64_t size = per_stage[centre];
    for (bool grew = true; grew;) {
      grew = false;
      if (w.first > 0 && size + per_stage[w.first - 1] <= columns) {
        size += per_stage[--w.first];
        grew = true;
      }
      if (w.last + 1 < n && size + per_stage[w.last + 1] <= columns) {
        size += per_stage[++w.last];
        grew = true;
      }
    }
    if (seen.insert({w.first, w.last}).second) windows.push_back(w);
  }
  return windows;
}

// CBC's limit for one window: a quarter of the time left, at least `least` seconds and at most
// 30, so that many windows get a turn; never more than what is left, less 0.2 s for decoding
// and simulating its answer.
double WindowTimeLimit(double left_s, double least_s) {
  return std::max(0.5, std::min(left_s - 0.2, std::clamp(left_s / 4, least_s, 30.0)));
}

// Bytes over the budget, summed over the stages whose peak exceeds it.
int64_t Excess(const SimulationResult& sim, int64_t budget_bytes) {
  int64_t excess = 0;
  for (int64_t peak : sim.stage_peak_bytes) excess += std::max<int64_t>(0, peak - budget_bytes);
  return excess;
}

}  // namespace

RepairResult RepairByWindows(const Graph& graph, int64_t budget_bytes, const StrategyResult& start,
                             const WindowSearchOptions& options) {
  const auto begin = Clock::now();
  // A cancelled call has no time left.
  auto left = [&] { return std::min(SecondsLeft(), options.time_limit_s - Since(begin)); };
  RepairResult result;
  if (start.status == FitStatus::kFits) {
    result.fitting = start;
    return result;
  }
  const std::vector<int64_t> per_stage = WindowColumnsPerStage(graph);
  Schedule current = WithoutUselessHolds(graph, start.schedule);
  int64_t columns = 4 * options.window_columns;  // repairs need room: larger first windows
  std::set<std::pair<int32_t, int32_t>> failed;
  while (left() > 1.0) {
    const SimulationResult sim = Simulate(graph, current);
    const int64_t excess = Excess(sim, budget_bytes);
    if (result.windows == 0) result.excess_before = excess;
    result.excess_after = excess;
    if (excess == 0) {
      result.fitting = EvaluateSchedule(graph, start.strategy, current, budget_bytes,
                                        start.parameters + "; repaired by windows");
      return result;
    }
    // Over-budget stages, worst first.
    std::vector<int32_t> over;
    for (int32_t t = 0; t < graph.size(); ++t) {
      if (sim.stage_peak_bytes[t] > budget_bytes) over.push_back(t);
    }
    std::stable_sort(over.begin(), over.end(), [&](int32_t a, int32_t b) {
      return sim.stage_peak_bytes[a] > sim.stage_peak_bytes[b];
    });
    bool repaired = false;
    for (const StageWindow& window : WindowsAround(over, per_stage, columns)) {
      if (left() <= 1.0) break;
      if (failed.count({window.first, window.last}) > 0) continue;
      const CheckmateModel model = BuildWindowModel(graph, budget_bytes, current, window,
                                                    {.integer = true, .elastic = true});
      SolverOutput out;
      if (!model.proven_infeasible) {
        const double limit = WindowTimeLimit(left(), 5.0);
        out = SolveMipWithCbc(model.lp, model.Assignment(graph, current),
                              {.time_limit_s = 0.8 * limit, .hard_deadline_s = limit,
                               .threads = options.threads, .seed = options.seed});
        ++result.windows;
      }
      if (!out.values.empty()) {
        Schedule candidate =
            ScheduleFromCheckpoints(graph, model.DecodeS(out.values, 0.5, &current.S));
        if (Excess(Simulate(graph, candidate), budget_bytes) < excess) {
          current = std::move(candidate);
          repaired = true;
          break;
        }
      }
      failed.insert({window.first, window.last});
    }
    if (repaired) {
      failed.clear();
      continue;
    }
    if (columns >= options.max_window_columns) break;
    columns = std::min(options.max_window_columns, columns * 2);
  }
  return result;
}

std::vector<int64_t> WindowColumnsPerStage(const Graph& graph) {
  const int32_t n = graph.size();
  const std::vector<int32_t> last = LastPossibleUse(graph);
  // Node i contributes to stages i..last[i]: two columns (R, S) after its own stage, and the
  // FREE columns of the values its position reads.
  std::vector<int64_t> delta(static_cast<size_t>(n) + 1, 0);
  for (int32_t i = 0; i < n; ++i) {
    const int64_t frees = static_cast<int64_t>(graph.preds(i).size()) + 1;
    delta[i] += frees;
    delta[i + 1] += 2;
    delta[last[i] + 1] -= frees + 2;
  }
  std::vector<int64_t> columns(static_cast<size_t>(n));
  int64_t running = 0;
  for (int32_t t = 0; t < n; ++t) {
    running += delta[t];
    columns[t] = running + t + 1;  // U has t + 1 positions
  }
  return columns;
}

std::vector<StageWindow> CandidateWindows(const Graph& graph, const Schedule& schedule,
                                          const std::vector<int64_t>& stage_peak_bytes,
                                          int64_t columns) {
  const int32_t n = graph.size();
  const std::vector<double> recompute = RecomputationCost(graph, schedule);
  const std::vector<int64_t> per_stage = WindowColumnsPerStage(graph);
  std::vector<int32_t> centres;
  for (int32_t t = 0; t < n; ++t) {
    if (recompute[t] > 0 && per_stage[t] <= columns) centres.push_back(t);
  }
  std::stable_sort(centres.begin(), centres.end(), [&](int32_t a, int32_t b) {
    if (recompute[a] != recompute[b]) return recompute[a] > recompute[b];
    return stage_peak_bytes[a] > stage_peak_bytes[b];
  });
  return WindowsAround(centres, per_stage, columns);
}

Schedule WithoutUselessHolds(const Graph& graph, const Schedule& schedule) {
  const int32_t n = graph.size();
  const std::vector<int32_t> last = LastPossibleUse(graph);
  Schedule current = schedule;
  // Dropping holds can drop recomputations (R follows from S), which can make more holds
  // useless: repeat until nothing changes (each pass removes at least one hold).
  for (bool changed = true; changed;) {
    changed = false;
    // The stages in which each value is read by a node computed there.
    std::vector<std::vector<int32_t>> read_in(static_cast<size_t>(n));
    const std::vector<std::vector<int32_t>> rows = current.R.Rows();
    for (int32_t t = 0; t < n; ++t) {
      for (int32_t j : rows[t]) {
        for (int32_t u : graph.preds(j)) read_in[u].push_back(t);
      }
    }
    StageMatrix S(n, n);
    DeadlineCheck deadline;  // stage by stage through every hold: minutes on a long chain
    for (int32_t i = 0; i < n; ++i) {
      std::sort(read_in[i].begin(), read_in[i].end());
      // Backwards, so that whether the next stage keeps the hold is already known.
      bool next_kept = false;
      int32_t next_stage = n;
      const std::vector<StageRun>& runs = current.S.Runs(i);
      for (auto run = runs.rbegin(); run != runs.rend(); ++run) {
        for (int32_t t = run->last; t >= run->first; --t) {
          deadline.Step();
          const bool read = std::binary_search(read_in[i].begin(), read_in[i].end(), t);
          const bool keep = t <= last[i] && (read || (next_kept && next_stage == t + 1));
          if (keep) S.Set(t, i);
          changed = changed || !keep;
          next_kept = keep;
          next_stage = t;
        }
      }
    }
    if (changed) current = ScheduleFromCheckpoints(graph, std::move(S));
  }
  return current;
}

namespace {

// The fitting schedule the search starts from: `start`, or when it is over the budget its
// repair, whose windows and excess go to `result`; nullopt when the repair fails.
std::optional<StrategyResult> FittingStart(const Graph& graph, int64_t budget_bytes,
                                           const StrategyResult& start,
                                           const WindowSearchOptions& options,
                                           WindowSearchResult& result) {
  std::optional<StrategyResult> fitting = start;
  if (start.status != FitStatus::kFits) {
    const RepairResult repair =
        RepairByWindows(graph, budget_bytes, start,
                        {.time_limit_s = options.time_limit_s,
                         .threads = options.threads,
                         .seed = options.seed,
                         .window_columns = options.window_columns,
                         .max_window_columns = options.max_window_columns});
    result.windows = repair.windows;
    result.excess_before = repair.excess_before;
    result.excess_after = repair.excess_after;
    fitting = repair.fitting;
    if (fitting) {
      result.best = *fitting;
      result.repaired = true;
    }
  }
  return fitting;
}

// What one window's MILP gave: CBC's status, and the schedule it decodes to when that fits the
// budget and is cheaper than the incumbent.
struct WindowOutcome {
  SolveStatus status = SolveStatus::kTimeLimitNoSolution;
  std::optional<StrategyResult> better;
};

// Re-optimizes `window` of the incumbent `current` exactly, started from the incumbent when it
// is valid in the window's model; nullopt when the model is proven infeasible. CBC's limit
// comes from the time `left` once the model is built.
std::optional<WindowOutcome> SolveWindow(const Graph& graph, int64_t budget_bytes,
                                         const StrategyResult& current, const StageWindow& window,
                                         const WindowSearchOptions& options,
                                         const std::function<double()>& left) {
  const CheckmateModel model =
      BuildWindowModel(graph, budget_bytes, current.schedule, window, {.integer = true});
  if (model.proven_infeasible) return std::nullopt;  // cannot happen: the incumbent satisfies it
  const std::vector<double> assignment = model.Assignment(graph, current.schedule);
  const bool start_valid = model.lp.MaxViolation(assignment) <= 1e-6;
  const double limit = WindowTimeLimit(left(), 2.0);
  MipOptions mip{.time_limit_s = 0.8 * limit, .hard_deadline_s = limit,
                 .threads = options.threads, .seed = options.seed};
  const SolverOutput out =
      SolveMipWithCbc(model.lp, start_valid ? assignment : std::vector<double>{}, mip);
  WindowOutcome outcome{.status = out.status};
  if (!out.values.empty()) {
    const StageMatrix S = model.DecodeS(out.values, 0.5, &current.schedule.S);
    StrategyResult candidate =
        EvaluateSchedule(graph, current.strategy, ScheduleFromCheckpoints(graph, S),
                         budget_bytes, current.parameters);
    if (candidate.status == FitStatus::kFits &&
        candidate.cost < current.cost - 1e-9 * std::max(1.0, current.cost)) {
      outcome.better = std::move(candidate);
    }
  }
  return outcome;
}

}  // namespace

WindowSearchResult ImproveByWindows(const Graph& graph, int64_t budget_bytes,
                                    const StrategyResult& start,
                                    const WindowSearchOptions& options) {
  const auto begin = Clock::now();
  // A cancelled call has no time left.
  auto left = [&] { return std::min(SecondsLeft(), options.time_limit_s - Since(begin)); };
  WindowSearchResult result;
  result.best = start;
  if (graph.size() < 2) return result;
  const std::optional<StrategyResult> fitting =
      FittingStart(graph, budget_bytes, start, options, result);
  if (!fitting) {
    result.seconds = Since(begin);
    return result;
  }
  StrategyResult current = EvaluateSchedule(graph, fitting->strategy,
                                            WithoutUselessHolds(graph, fitting->schedule),
                                            budget_bytes, fitting->parameters);
  if (current.status != FitStatus::kFits || current.cost > fitting->cost) current = *fitting;
  const std::string base_parameters = current.parameters;

  int64_t columns = options.window_columns;
  // Windows proven optimal for the current incumbent at the current size, by first stage.
  std::set<std::pair<int32_t, int32_t>> proven;
  double last_improvement_s = Since(begin);
  auto stalled = [&] {
    result.stalled = result.stalled || (options.patience_s > 0 &&
                                        Since(begin) - last_improvement_s > options.patience_s);
    return result.stalled;
  };
  // A window gets no more than the patience that is left (and at least enough to solve).
  auto window_left = [&] {
    if (options.patience_s <= 0) return left();
    const double patience_left = options.patience_s - (Since(begin) - last_improvement_s);
    return std::min(left(), std::max(1.5, patience_left));
  };
  while (left() > 1.0 && current.cost > options.stop_at_cost && !stalled()) {
    const SimulationResult sim = Simulate(graph, current.schedule);
    const std::vector<StageWindow> candidates =
        CandidateWindows(graph, current.schedule, sim.stage_peak_bytes, columns);
    if (candidates.empty()) {
      // Nothing is recomputed (the frontier alone is the optimum), or only in stages larger
      // than the current size: those wait for it to grow, up to the largest size.
      const std::vector<double> recompute = RecomputationCost(graph, current.schedule);
      const bool recomputes = std::any_of(recompute.begin(), recompute.end(),
                                          [](double cost) { return cost > 0; });
      if (recomputes && columns < options.max_window_columns) {
        columns = std::min(options.max_window_columns, columns * 2);
        continue;
      }
      result.too_large = recomputes;
      result.local_optimum = !recomputes;
      break;
    }
    bool improved = false;
    bool unproven = false;
    for (const StageWindow& window : candidates) {
      if (left() <= 1.0 || stalled()) break;
      if (proven.count({window.first, window.last}) > 0) continue;
      std::optional<WindowOutcome> outcome =
          SolveWindow(graph, budget_bytes, current, window, options, window_left);
      if (!outcome) continue;
      ++result.windows;
      if (outcome->status != SolveStatus::kOptimal) unproven = true;
      if (outcome->better) {
        current = std::move(*outcome->better);
        ++result.improvements;
        improved = true;
        last_improvement_s = Since(begin);
      }
      if (!improved && outcome->status == SolveStatus::kOptimal) {
        proven.insert({window.first, window.last});
      }
      if (options.progress) {
        options.progress({Since(begin), current.cost, result.windows, result.improvements, window});
      }
      if (improved) break;  // the stage data changed: choose windows anew
    }
    if (improved) {
      proven.clear();
      continue;
    }
    if (left() <= 1.0 || stalled()) break;
    // A whole round without improvement: larger windows if CBC proved every one, else smaller.
    if (unproven) {
      columns = std::max<int64_t>(500, columns / 2);
    } else if (columns >= options.max_window_columns) {
      result.local_optimum = true;
      break;
    } else {
      columns = std::min(options.max_window_columns, columns * 2);
    }
    proven.clear();
  }
  result.reached_target = current.cost <= options.stop_at_cost;
  if (result.improvements > 0) {
    current.parameters = fmt::format("{}; window search: {} {} tried, {} improved the schedule",
                                     base_parameters, result.windows,
                                     result.windows == 1 ? "window" : "windows",
                                     result.improvements);
    result.best = std::move(current);
  }
  result.seconds = Since(begin);
  return result;
}

}  // namespace remat
