// Stage-by-stage cost and peak of an R-from-S schedule under edits of S (docs/design.md §3).
#include "strategies/incremental_schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/recompute.h"
#include "core/simulator.h"

namespace remat {
namespace {

void Remove(std::vector<int32_t>& values, int32_t value) {
  const auto it = std::find(values.begin(), values.end(), value);
  if (it == values.end()) throw InternalError(fmt::format("value {} is not indexed", value));
  *it = values.back();
  values.pop_back();
}

// Membership of non-decreasing rows in a column's runs, walked once from `from`.
class RunCursor {
 public:
  RunCursor(const std::vector<StageRun>& runs, int32_t from)
      : runs_(runs),
        at_(static_cast<size_t>(
            std::lower_bound(runs.begin(), runs.end(), from,
                             [](const StageRun& run, int32_t r) { return run.last < r; }) -
            runs.begin())) {}
  bool Holds(int32_t row) {
    while (at_ < runs_.size() && runs_[at_].last < row) ++at_;
    return at_ < runs_.size() && runs_[at_].first <= row;
  }

 private:
  const std::vector<StageRun>& runs_;
  size_t at_;
};

bool InRuns(const std::vector<StageRun>& runs, int32_t row) {
  const auto it = std::lower_bound(runs.begin(), runs.end(), row,
                                   [](const StageRun& run, int32_t r) { return run.last < r; });
  return it != runs.end() && it->first <= row;
}

}  // namespace

IncrementalSchedule::IncrementalSchedule(const Graph& graph, StageMatrix S, int64_t budget_bytes)
    : g_(graph), S_(std::move(S)), budget_bytes_(budget_bytes) {
  const int32_t n = g_.size();
  R_ = ScheduleFromCheckpoints(g_, S_).R;
  rows_ = R_.Rows();
  starts_.assign(n, {});
  ends_.assign(n, {});
  // Bytes held per row from the runs' ends (a difference array), not from S's n^2 / 4 ones.
  std::vector<int64_t> held_change(static_cast<size_t>(n) + 1, 0);
  for (int32_t v = 0; v < n; ++v) {
    IndexRuns(v, +1);
    for (const StageRun& run : S_.Runs(v)) {
      held_change[run.first] += g_.node(v).bytes;
      held_change[run.last + 1] -= g_.node(v).bytes;
    }
  }
  held_bytes_.assign(n, 0);
  for (int64_t t = 0, held = 0; t < n; ++t) held_bytes_[t] = held += held_change[t];
  added_stamp_.assign(n, 0);
  read_stamp_.assign(n, 0);
  last_use_.assign(n, -1);
  live_stamp_.assign(n, 0);
  touched_stamp_.assign(n, 0);
  entry_of_stage_.assign(n, 0);
  read_row_stamp_.assign(n, 0);
  stage_cost_.assign(n, 0);
  stage_peak_bytes_.assign(n, 0);
  stage_allocation_peak_bytes_.assign(n, 0);
  for (int32_t t = 0; t < n; ++t) {
    const StageResult stage = RunStage(t, held_bytes_[t], rows_[t],
                                       [](int32_t, int64_t) { return true; });
    stage_cost_[t] = stage.cost;
    stage_peak_bytes_[t] = stage.peak_bytes;
    stage_allocation_peak_bytes_[t] = stage.allocation_peak_bytes;
    cost_ += stage.cost;
    peak_bytes_ = std::max(peak_bytes_, stage.peak_bytes);
    excess_bytes_ += std::max<int64_t>(0, stage.peak_bytes - budget_bytes_);
  }
}

void IncrementalSchedule::IndexRuns(int32_t value, int sign) {
  for (const StageRun& run : S_.Runs(value)) {
    if (sign > 0) {
      starts_[run.first].push_back(value);
      ends_[run.last].push_back(value);
    } else {
      Remove(starts_[run.first], value);
      Remove(ends_[run.last], value);
    }
  }
}

bool IncrementalSchedule::HeldBefore(int32_t value, int32_t row) const {
  if (!editing_) return S_.Get(row, value);
  for (size_t e = 0; e < pending_.edits.size(); ++e) {
    if (pending_.edits[e].value == value) return InRuns(pending_.old_columns[e], row);
  }
  return S_.Get(row, value);
}

void IncrementalSchedule::RunBoundaries(int32_t row, bool starts,
                                        std::vector<int32_t>& out) const {
  out = starts ? starts_[row] : ends_[row];
  if (!editing_) return;
  for (size_t e = 0; e < pending_.edits.size(); ++e) {
    const int32_t value = pending_.edits[e].value;
    for (const StageRun& run : pending_.old_columns[e]) {
      if ((starts ? run.first : run.last) == row) Remove(out, value);
    }
    for (const StageRun& run : S_.Runs(value)) {
      if ((starts ? run.first : run.last) == row) out.push_back(value);
    }
  }
}

// Stage t's computations as ScheduleFromCheckpoints makes them: the frontier node and the
// values whose holding starts in t + 1, with every input that S does not hold.
void IncrementalSchedule::BuildRow(int32_t t, std::vector<int32_t>& row) {
  const int64_t stamp = ++stamp_;
  std::vector<int32_t> stack;
  if (t + 1 < g_.size()) RunBoundaries(t + 1, /*starts=*/true, stack);
  stack.push_back(t);
  row.clear();
  for (int32_t v : stack) added_stamp_[v] = -stamp;  // queued, not yet expanded
  while (!stack.empty()) {
    const int32_t v = stack.back();
    stack.pop_back();
    if (added_stamp_[v] == stamp) continue;
    added_stamp_[v] = stamp;
    row.push_back(v);
    for (int32_t u : g_.preds(v)) {
      if (added_stamp_[u] == stamp || added_stamp_[u] == -stamp || S_.Get(t, u)) continue;
      added_stamp_[u] = -stamp;
      stack.push_back(u);
    }
  }
  std::sort(row.begin(), row.end());
}

// Stage t as BuildPlan and Simulate run it: values whose holding ends in t are freed at the
// start unless the stage reads them, every other value after its last reader in the stage
// unless S holds it into t + 1.
template <typename OnAllocate>
IncrementalSchedule::StageResult IncrementalSchedule::RunStage(int32_t t, int64_t held_bytes,
                                                               const std::vector<int32_t>& row,
                                                               OnAllocate&& on_allocate) {
  const int32_t n = g_.size();
  const int64_t stamp = ++stamp_;
  for (int32_t v : row) {
    for (int32_t u : g_.preds(v)) {
      read_stamp_[u] = stamp;
      last_use_[u] = v;  // v increases, so the last reader wins
    }
  }
  auto needed_after = [&](int32_t u, int32_t position) {
    return (t + 1 < n && S_.Get(t + 1, u)) || (read_stamp_[u] == stamp && last_use_[u] > position);
  };
  StageResult stage;
  int64_t live = held_bytes;
  stage.peak_bytes = live;
  stage.allocation_peak_bytes = std::numeric_limits<int64_t>::min();
  auto free_if_done = [&](int32_t u, int32_t position) {
    if (live_stamp_[u] == -stamp || needed_after(u, position)) return;
    live_stamp_[u] = -stamp;  // freed in this stage
    live -= g_.node(u).bytes;
  };
  std::vector<int32_t> ends;
  RunBoundaries(t, /*starts=*/false, ends);
  for (int32_t u : ends) free_if_done(u, u);
  for (int32_t i : row) {
    const Node& node = g_.node(i);
    live += node.bytes;
    stage.allocation_peak_bytes = std::max(stage.allocation_peak_bytes, live);
    if (!on_allocate(i, live)) break;
    stage.peak_bytes = std::max(stage.peak_bytes, live + node.workspace_bytes);
    stage.cost += node.cost;
    for (int32_t u : g_.preds(i)) free_if_done(u, i);
    free_if_done(i, i);
  }
  return stage;
}

IncrementalSchedule::StageResult IncrementalSchedule::SimulateStage(int32_t t,
                                                                    int64_t held_bytes,
                                                                    std::vector<int32_t>& row) {
  BuildRow(t, row);
  return RunStage(t, held_bytes, row, [](int32_t, int64_t) { return true; });
}

IncrementalSchedule::AllocationPeak IncrementalSchedule::PeakAllocation(int32_t t) {
  AllocationPeak peak;
  const int64_t target = stage_allocation_peak_bytes_[t];
  RunStage(t, held_bytes_[t], rows_[t], [&](int32_t node, int64_t live) {
    if (live < target) return true;
    peak.node = node;
    return false;
  });
  // What is live then: S's row not freed yet, and the stage's computations so far.
  const int64_t freed = -stamp_;
  for (int32_t u : S_.RowOnes(t)) {
    if (live_stamp_[u] != freed) peak.live.push_back(u);
  }
  for (int32_t v : rows_[t]) {
    if (v > peak.node) break;
    if (live_stamp_[v] != freed) peak.live.push_back(v);
  }
  std::sort(peak.live.begin(), peak.live.end());
  return peak;
}

IncrementalSchedule::Outcome IncrementalSchedule::Evaluate(std::span<const HoldEdit> edits) {
  const int32_t n = g_.size();
  pending_ = Pending{};
  for (const HoldEdit& edit : edits) {
    if (edit.last < edit.first) continue;
    for (const HoldEdit& other : pending_.edits) {
      if (other.value == edit.value) {
        throw InternalError(fmt::format("two edits of value {} in one move", edit.value));
      }
    }
    pending_.edits.push_back(edit);
    pending_.old_columns.push_back(S_.Runs(edit.value));
  }
  for (const HoldEdit& edit : pending_.edits) {
    S_.SetRun(edit.value, edit.first, edit.last, edit.hold);
  }
  editing_ = true;

  // Which stages each edit reaches, and how (the class comment).
  const int64_t stamp = ++stamp_;
  std::vector<int64_t> shift;        // by entry of `stages`
  std::vector<bool> recompute;       // by entry of `stages`
  auto entry = [&](int32_t t) {
    if (touched_stamp_[t] != stamp) {
      touched_stamp_[t] = stamp;
      entry_of_stage_[t] = static_cast<int32_t>(pending_.stages.size());
      pending_.stages.push_back(t);
      pending_.held_delta.push_back(0);
      shift.push_back(0);
      recompute.push_back(false);
    }
    return entry_of_stage_[t];
  };
  for (const HoldEdit& edit : pending_.edits) {
    const int32_t v = edit.value;
    const int64_t bytes = g_.node(v).bytes;
    // Stages that compute v or read it: their computations can change.
    const int64_t reads = ++stamp_;
    auto mark = [&](int32_t column) {
      for (const StageRun& run : R_.Runs(column)) {
        for (int32_t t = std::max(run.first, edit.first - 1); t <= std::min(run.last, edit.last);
             ++t) {
          read_row_stamp_[t] = reads;
        }
      }
    };
    mark(v);
    for (int32_t w : g_.succs(v)) mark(w);
    const int32_t from = std::max(0, edit.first - 1);
    const size_t e = static_cast<size_t>(&edit - pending_.edits.data());
    RunCursor before(pending_.old_columns[e], from), after(S_.Runs(v), from);
    for (int32_t t = from; t <= std::min(edit.last, n - 1); ++t) {
      const bool old_t = before.Holds(t), new_t = after.Holds(t);
      const bool old_next = t + 1 < n && before.Holds(t + 1);
      const bool new_next = t + 1 < n && after.Holds(t + 1);
      if (old_t == new_t && old_next == new_next) continue;
      const int32_t k = entry(t);
      const int64_t delta = (static_cast<int64_t>(new_t) - old_t) * bytes;
      pending_.held_delta[k] += delta;
      if (old_t == old_next && new_t == new_next && read_row_stamp_[t] != reads) {
        shift[k] += delta;
      } else {
        recompute[k] = true;
      }
    }
  }

  Outcome outcome{.cost = cost_, .peak_bytes = 0};
  pending_.results.resize(pending_.stages.size());
  for (size_t k = 0; k < pending_.stages.size(); ++k) {
    const int32_t t = pending_.stages[k];
    if (recompute[k]) {
      std::vector<int32_t> row;
      pending_.results[k] = SimulateStage(t, held_bytes_[t] + pending_.held_delta[k], row);
      outcome.cost += pending_.results[k].cost - stage_cost_[t];
      pending_.recomputed.push_back(t);
      pending_.recomputed_rows.push_back(std::move(row));
    } else {
      pending_.results[k] = {
          .cost = stage_cost_[t],
          .peak_bytes = stage_peak_bytes_[t] + shift[k],
          .allocation_peak_bytes = stage_allocation_peak_bytes_[t] + shift[k]};
    }
  }
  for (int32_t t = 0; t < n; ++t) {
    const int64_t peak = touched_stamp_[t] == stamp
                             ? pending_.results[entry_of_stage_[t]].peak_bytes
                             : stage_peak_bytes_[t];
    outcome.peak_bytes = std::max(outcome.peak_bytes, peak);
    outcome.excess_bytes += std::max<int64_t>(0, peak - budget_bytes_);
  }
  for (size_t e = pending_.edits.size(); e-- > 0;) {
    S_.SetColumn(pending_.edits[e].value, pending_.old_columns[e]);
  }
  editing_ = false;
  pending_.outcome = outcome;
  pending_.valid = true;
  return outcome;
}

void IncrementalSchedule::Commit() {
  if (!pending_.valid) throw InternalError("Commit without an Evaluate");
  for (const HoldEdit& edit : pending_.edits) {
    IndexRuns(edit.value, -1);
    S_.SetRun(edit.value, edit.first, edit.last, edit.hold);
    IndexRuns(edit.value, +1);
  }
  for (size_t k = 0; k < pending_.stages.size(); ++k) {
    const int32_t t = pending_.stages[k];
    held_bytes_[t] += pending_.held_delta[k];
    stage_cost_[t] = pending_.results[k].cost;
    stage_peak_bytes_[t] = pending_.results[k].peak_bytes;
    stage_allocation_peak_bytes_[t] = pending_.results[k].allocation_peak_bytes;
  }
  for (size_t k = 0; k < pending_.recomputed.size(); ++k) {
    const int32_t t = pending_.recomputed[k];
    for (int32_t v : rows_[t]) R_.Set(t, v, false);
    rows_[t] = std::move(pending_.recomputed_rows[k]);
    for (int32_t v : rows_[t]) R_.Set(t, v);
  }
  cost_ = pending_.outcome.cost;
  peak_bytes_ = pending_.outcome.peak_bytes;
  excess_bytes_ = pending_.outcome.excess_bytes;
  pending_ = Pending{};
}

Schedule IncrementalSchedule::Verify() {
  Schedule schedule = ScheduleFromCheckpoints(g_, S_);
  const SimulationResult sim = Simulate(g_, schedule);
  const bool cost_agrees = std::abs(sim.cost - cost_) <= 1e-9 * std::max(1.0, std::abs(sim.cost));
  if (!(schedule.R == R_) || sim.peak_bytes != peak_bytes_ ||
      sim.stage_peak_bytes != stage_peak_bytes_ || !cost_agrees) {
    throw InternalError(fmt::format(
        "the stage-by-stage evaluation (cost {}, peak {} B) disagrees with the simulator's "
        "(cost {}, peak {} B{})",
        cost_, peak_bytes_, sim.cost, sim.peak_bytes,
        schedule.R == R_ ? "" : "; the recomputations differ"));
  }
  cost_ = sim.cost;  // the same sum in another order: keep the simulator's last bits
  return schedule;
}

}  // namespace remat
