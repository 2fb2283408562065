// A schedule in R-from-S form that a search changes a few columns of S at a time: it prices a
// change by recomputing only the stages the change can reach, where rebuilding R and simulating
// the whole schedule would take time linear in its size for every candidate.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "core/graph.h"
#include "core/schedule.h"
#include "core/stage_matrix.h"

namespace remat {

// Sets (hold = true) or clears rows first..last of column `value` of S.
struct HoldEdit {
  int32_t value;
  int32_t first;
  int32_t last;
  bool hold;
};

// The cost and peak of a schedule by the rules of docs/design.md §3 ("R from S", the plan's
// allocations and frees, the simulator's peak), kept stage by stage. Stage t's computations
// depend on rows t and t + 1 of S only, and its peak on those and its computations; an edit of
// rows first..last of one column therefore reaches stages first - 1..last, and of those only
// the ones whose computations read the value (or compute it), or where its presence changes
// between t and t + 1, need recomputing: in the others the value is live for the whole stage
// or absent from it, and the stage's peak moves by exactly its bytes.
//
// These are a search's estimates: a caller re-simulates what it keeps (Verify).
class IncrementalSchedule {
 public:
  // `budget_bytes` only sets what excess_bytes counts.
  IncrementalSchedule(const Graph& graph, StageMatrix S,
                      int64_t budget_bytes = std::numeric_limits<int64_t>::max());

  double cost() const { return cost_; }
  int64_t peak_bytes() const { return peak_bytes_; }
  // Bytes over the budget summed over the stages' peaks.
  int64_t excess_bytes() const { return excess_bytes_; }
  const std::vector<int64_t>& stage_peak_bytes() const { return stage_peak_bytes_; }
  const StageMatrix& S() const { return S_; }
  const StageMatrix& R() const { return R_; }
  // The nodes each stage computes, in increasing order.
  const std::vector<std::vector<int32_t>>& computed() const { return rows_; }

  struct Outcome {
    double cost = 0;
    int64_t peak_bytes = 0;
    int64_t excess_bytes = 0;
  };
  // The cost and peak after `edits` (at most one per value), applied in order; the schedule
  // stays as it is until Commit.
  Outcome Evaluate(std::span<const HoldEdit> edits);
  // Applies the edits of the last Evaluate.
  void Commit();

  // The most bytes live right after an allocation in stage t (the output of a node, before it
  // runs; a workspace does not count).
  int64_t allocation_peak_bytes(int32_t t) const { return stage_allocation_peak_bytes_[t]; }
  struct AllocationPeak {
    int32_t node = -1;          // the first allocation of the stage that reaches its peak
    std::vector<int32_t> live;  // the values live right after it, increasing
  };
  AllocationPeak PeakAllocation(int32_t t);

  // The schedule, its R rebuilt from S by the rules and simulated; throws InternalError when
  // the stage-by-stage cost or peak disagrees with the simulator's.
  // Takes the simulator's cost as its own (the same sum in another order).
  Schedule Verify();

 private:
  struct StageResult {
    double cost = 0;
    int64_t peak_bytes = 0;
    int64_t allocation_peak_bytes = 0;
  };
  // Whether `value` is held in `row` before the edits being evaluated (or now, outside Evaluate).
  bool HeldBefore(int32_t value, int32_t row) const;
  // The values whose run of S starts (ends) in `row`, with the edits applied to S_.
  void RunBoundaries(int32_t row, bool starts, std::vector<int32_t>& out) const;
  // Stage t with the edits applied to S_, which hold `held_bytes` into it: its computations
  // into `row`.
  StageResult SimulateStage(int32_t t, int64_t held_bytes, std::vector<int32_t>& row);
  // The computations of stage t by the R-from-S rule, increasing.
  void BuildRow(int32_t t, std::vector<int32_t>& row);
  // Runs stage t's allocations and frees; `on_allocate(node, live_bytes)` after each allocation
  // stops the stage when it returns false. Values freed are marked live_stamp_ = -stamp_.
  template <typename OnAllocate>
  StageResult RunStage(int32_t t, int64_t held_bytes, const std::vector<int32_t>& row,
                       OnAllocate&& on_allocate);
  void IndexRuns(int32_t value, int sign);

  const Graph& g_;
  StageMatrix S_;
  StageMatrix R_;
  std::vector<std::vector<int32_t>> rows_;    // R by rows
  std::vector<std::vector<int32_t>> starts_;  // starts_[t]: values whose run of S starts in t
  std::vector<std::vector<int32_t>> ends_;    // ends_[t]: values whose run of S ends in t
  std::vector<int64_t> held_bytes_;           // bytes of S's row t
  std::vector<double> stage_cost_;
  std::vector<int64_t> stage_peak_bytes_;
  std::vector<int64_t> stage_allocation_peak_bytes_;
  int64_t budget_bytes_;
  double cost_ = 0;
  int64_t peak_bytes_ = 0;
  int64_t excess_bytes_ = 0;

  // The last Evaluate: its edits, S's columns before them, and the stages it recomputed.
  struct Pending {
    std::vector<HoldEdit> edits;
    std::vector<std::vector<StageRun>> old_columns;
    std::vector<int32_t> stages;  // every stage whose peak moved, increasing
    std::vector<StageResult> results;
    std::vector<int32_t> recomputed;  // stages whose computations were rebuilt
    std::vector<std::vector<int32_t>> recomputed_rows;
    std::vector<int64_t> held_delta;  // per entry of `stages`
    Outcome outcome;
    bool valid = false;
  } pending_;
  bool editing_ = false;  // inside Evaluate: S_ holds pending_.edits

  // Scratch, by node id: a stamp per stage simulation instead of clearing.
  int64_t stamp_ = 0;
  std::vector<int64_t> added_stamp_;
  std::vector<int64_t> read_stamp_;
  std::vector<int32_t> last_use_;
  std::vector<int64_t> live_stamp_;
  std::vector<int64_t> touched_stamp_;   // by stage: the stage is in pending_.stages
  std::vector<int32_t> entry_of_stage_;  // by stage: its index in pending_.stages
  std::vector<int64_t> read_row_stamp_;  // by stage: computes or reads the edited value
};

}  // namespace remat
