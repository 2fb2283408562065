// Schedule files: the graph, S and R as per-node stage intervals, and the simulated figures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/graph.h"
#include "core/schedule.h"

namespace remat {

inline constexpr const char* kScheduleSchema = "remat.schedule/1";

struct ScheduleInfo {
  std::string strategy;
  double cost = 0;                     // from the simulator
  int64_t peak_bytes = 0;              // from the simulator
  std::optional<int64_t> budget_bytes;
  // The solver's verdict when a solver produced the schedule (kRecordedSolverStatuses:
  // "optimal" only when proven within 1e-4, "within_gap" at a looser gap target, "feasible"
  // otherwise), empty for heuristics; and the best valid lower bound on the cost at this
  // budget, when one was computed. Optional in files (absent in older ones). Read from a file,
  // both are what the file records, not verified: front ends say so (docs/formats.md).
  std::string solver_status;
  std::optional<double> lower_bound_cost;
};

// The solver statuses a schedule file may record.
inline constexpr const char* kRecordedSolverStatuses[] = {"optimal", "within_gap", "feasible"};
bool IsRecordedSolverStatus(const std::string& status);

// The words front ends print beside a proof field read from a file.
inline constexpr const char* kNotVerified = "recorded, not verified";

struct ScheduleDocument {
  Graph graph;
  Schedule schedule;
  ScheduleInfo info;
};

// Self-contained: the file embeds the graph, so it can be plotted or executed alone.
std::string ScheduleToJson(const Graph& graph, const Schedule& schedule, const ScheduleInfo& info);
// Throws InputError for malformed files, a fingerprint that does not match the embedded graph,
// matrices that do not fit it, a solver status not in kRecordedSolverStatuses, or a lower bound
// above the schedule's re-simulated cost (no valid bound is). The stored cost and peak are returned as written; callers
// re-simulate before reporting.
ScheduleDocument ScheduleFromJson(const std::string& text, const std::string& source);

void SaveScheduleFile(const Graph& graph, const Schedule& schedule, const ScheduleInfo& info,
                      const std::string& path);
ScheduleDocument LoadScheduleFile(const std::string& path);

// Re-simulates the schedule against the budget its file records: a peak over it (a file
// hand-edited, or saved by an older remat) is an InputError naming the file, both sizes and
// `override_name`, the caller's way to run it anyway. A file without a budget passes.
void CheckScheduleWithinBudget(const ScheduleDocument& document, const std::string& path,
                               const std::string& override_name);

}  // namespace remat
