// Anytime large-neighbourhood search on the Checkmate MILP (issue 12): a window of stages is
// re-optimized exactly by CBC while every other stage keeps the incumbent's S; improvements
// are kept and the search moves on to the next window until the time is spent.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>

#include "core/evaluated_schedule.h"
#include "core/graph.h"
#include "solvers/checkmate_model.h"

namespace remat {

struct WindowProgress {
  double elapsed_s = 0;
  double cost = 0;          // the incumbent's simulated cost, graph units
  int32_t windows = 0;      // windows solved so far
  int32_t improvements = 0;
  StageWindow window;       // the window just solved
};

struct WindowSearchOptions {
  double time_limit_s = 60;  // the whole call, model building included
  int32_t threads = 1;
  int32_t seed = 1;
  // Size of the first windows, in model columns (estimated). It doubles after a round of
  // windows that CBC all proved optimal without improving, halves after one it could not prove,
  // and doubles at once when every stage that recomputes is larger on its own.
  int64_t window_columns = 4000;
  int64_t max_window_columns = 200000;
  // Stop as soon as the incumbent costs at most this (a decision question, not the optimum).
  double stop_at_cost = -std::numeric_limits<double>::infinity();
  // When positive, stop once this many seconds pass without an improving window (counted from
  // the start of the search or its last improvement): the search has stopped paying its way.
  double patience_s = 0;
  std::function<void(const WindowProgress&)> progress;  // after every window
};

struct WindowSearchResult {
  StrategyResult best;       // the start, or a cheaper fitting schedule; always simulated
  int32_t windows = 0;       // windows solved
  int32_t improvements = 0;  // windows that lowered the cost
  // Every stage with recomputation was inside a window of the largest size tried that CBC
  // proved optimal for the current incumbent: no single window of that size improves it.
  bool local_optimum = false;
  bool stalled = false;      // stopped by options.patience_s
  bool reached_target = false;  // stopped because the cost met options.stop_at_cost
  bool repaired = false;     // the start was over the budget and windows made it fit
  // Stopped because every stage that recomputes something (still) has a model larger than
  // max_window_columns on its own: no window was tried there, nothing is proven.
  bool too_large = false;
  // A start over the budget: its bytes over the budget summed over stages, before the repair
  // and after it (0 when repaired).
  int64_t excess_before = 0;
  int64_t excess_after = 0;
  double seconds = 0;
};

// The stage windows to try, most promising first: one around each stage that recomputes
// something, ordered by the stage's recomputation cost (ties: the stage closest to the budget),
// grown on both sides while the window's model stays within `columns`. Stages without
// recomputation already cost only their frontier node, so windows are never centred there,
// nor at a stage whose model alone exceeds `columns`: no window is larger than the current
// size (CBC's memory grows with it: single backward stages of an 80-layer GPT-2 took `remat
// solve` to 657 MB, one of a 24-layer GPT-2, 37,374 columns, to 188 MB).
std::vector<StageWindow> CandidateWindows(const Graph& graph, const Schedule& schedule,
                                          const std::vector<int64_t>& stage_peak_bytes,
                                          int64_t columns);

// Estimated columns of a window model per stage: R and S of the values live at the stage, U
// per position and FREE per value read at a position (BuildWindowModel builds about as many).
std::vector<int64_t> WindowColumnsPerStage(const Graph& graph);

// A start over the budget is first repaired (RepairByWindows); one that stays over comes back
// unchanged, as does one that no window improves in the time. Every accepted schedule is
// rebuilt by R-from-S and re-simulated.
WindowSearchResult ImproveByWindows(const Graph& graph, int64_t budget_bytes,
                                    const StrategyResult& start,
                                    const WindowSearchOptions& options = {});

// Makes an over-budget schedule fit: a window around the stages over the budget, worst first,
// is solved by CBC on the elastic model (least overflow, then least cost), started from the
// incumbent; a solution that lowers the bytes over the budget, summed over stages, is kept. Stages outside the window keep their peaks, so each step makes progress.
// Windows grow when none helps. Returns the first fitting schedule, or nothing in the time.
struct RepairResult {
  std::optional<StrategyResult> fitting;  // the repaired schedule, when one was found
  int64_t excess_before = 0;  // bytes over the budget summed over stages, at the start
  int64_t excess_after = 0;   // and at the end (0 when repaired)
  int32_t windows = 0;        // windows solved
};
RepairResult RepairByWindows(const Graph& graph, int64_t budget_bytes, const StrategyResult& start,
                             const WindowSearchOptions& options = {});

// `schedule` without useless holds, R rebuilt from the remaining S: a value held into a stage
// that neither reads it nor holds it into the next (this includes every hold past the value's
// last possible use, BuildWindowModel's requirement). The Checkmate rows charge such a hold until
// the end of its stage, the simulator not at all, so without them a schedule's assignment is
// exact (MIP starts are accepted). It never costs more nor peaks higher (tested).
Schedule WithoutUselessHolds(const Graph& graph, const Schedule& schedule);

}  // namespace remat
