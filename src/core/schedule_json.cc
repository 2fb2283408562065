// Schedule files. A column of R or S (the stages in which one node is computed or held) is
// nearly always a few runs of consecutive stages, so it is stored as [first, last] intervals.
#include "core/schedule_json.h"

#include <algorithm>
#include <iterator>

#include <fmt/ranges.h>

#include "core/file_io.h"
#include "core/graph_json.h"
#include "core/json_fields.h"
#include "core/quoted.h"
#include "core/simulator.h"
#include "core/sizes.h"

namespace remat {
namespace {

using namespace json_fields;

json ColumnIntervals(const StageMatrix& matrix) {
  json columns = json::array();
  for (int32_t col = 0; col < matrix.cols(); ++col) {
    json runs = json::array();
    for (const StageRun& run : matrix.Runs(col)) runs.push_back({run.first, run.last});
    columns.push_back(std::move(runs));
  }
  return columns;
}

StageMatrix MatrixFromIntervals(const json& columns, int32_t n, const Where& where) {
  AsArray(columns, where);
  if (static_cast<int64_t>(columns.size()) != n) {
    where.Fail(fmt::format("has {} entries but the graph has {} nodes", columns.size(), n));
  }
  StageMatrix matrix(n, n);
  for (int32_t col = 0; col < n; ++col) {
    const Where at = where[col];
    const json& runs = AsArray(columns[col], at);
    for (size_t k = 0; k < runs.size(); ++k) {
      const json& run = AsArray(runs[k], at[k]);
      if (run.size() != 2) at[k].Fail("expected [first stage, last stage]");
      const int32_t first = AsId(run[0], n, at[k][0]);
      const int32_t last = AsId(run[1], n, at[k][1]);
      if (last < first) at[k].Fail(fmt::format("interval [{}, {}] is reversed", first, last));
      matrix.SetRun(col, first, last);
    }
  }
  return matrix;
}

}  // namespace

std::string ScheduleToJson(const Graph& graph, const Schedule& schedule,
                           const ScheduleInfo& info) {
  json doc = {{"schema", kScheduleSchema},
              {"strategy", info.strategy},
              {"cost", info.cost},
              {"peak_bytes", info.peak_bytes},
              {"budget_bytes", info.budget_bytes ? json(*info.budget_bytes) : json(nullptr)},
              {"solver_status", info.solver_status.empty() ? json(nullptr) : json(info.solver_status)},
              {"lower_bound_cost", info.lower_bound_cost ? json(*info.lower_bound_cost) : json(nullptr)},
              {"stages", schedule.stages()},
              {"graph_fingerprint", GraphFingerprint(graph)},
              {"R", ColumnIntervals(schedule.R)},
              {"S", ColumnIntervals(schedule.S)},
              {"graph", json::parse(GraphToJson(graph))}};
  return doc.dump() + "\n";
}

ScheduleDocument ScheduleFromJson(const std::string& text, const std::string& source) {
  const json doc = ParseText(text, source);
  const Where root{source, ""};
  const std::string schema = AsString(Field(doc, "schema", root), root / "schema");
  if (schema != kScheduleSchema) {
    (root / "schema").Fail(fmt::format("unsupported schema '{}', expected '{}'", schema,
                                       kScheduleSchema));
  }
  Graph graph = GraphFromJson(Field(doc, "graph", root).dump(), source + " (embedded graph)");
  const std::string fingerprint =
      AsString(Field(doc, "graph_fingerprint", root), root / "graph_fingerprint");
  if (fingerprint != GraphFingerprint(graph)) {
    (root / "graph_fingerprint").Fail("does not match the embedded graph (edited by hand?)");
  }
  const int32_t n = graph.size();
  if (AsInt64(Field(doc, "stages", root), root / "stages") != n) {
    (root / "stages").Fail(fmt::format("must equal the graph's node count {}", n));
  }
  Schedule schedule{MatrixFromIntervals(Field(doc, "R", root), n, root / "R"),
                    MatrixFromIntervals(Field(doc, "S", root), n, root / "S")};
  // A schedule file is validated like a graph: R and S edited by hand must still satisfy
  // frontier-advancing and correctness (docs/design.md §3) before anything plans or runs from them.
  const std::vector<std::string> problems = CheckSchedule(graph, schedule, 5);
  if (!problems.empty()) {
    (root / "R/S").Fail(fmt::format("the schedule is not valid: {}",
                                    fmt::join(problems, "; ")));
  }
  ScheduleInfo info;
  info.strategy = AsString(Field(doc, "strategy", root), root / "strategy");
  info.cost = AsDouble(Field(doc, "cost", root), root / "cost");
  info.peak_bytes = AsInt64(Field(doc, "peak_bytes", root), root / "peak_bytes");
  const json& budget = Field(doc, "budget_bytes", root);
  if (!budget.is_null()) {
    info.budget_bytes = AsInt64(budget, root / "budget_bytes");
    if (*info.budget_bytes < 0) (root / "budget_bytes").Fail("must be >= 0");
  }
  if (doc.contains("solver_status") && !doc["solver_status"].is_null()) {
    info.solver_status = AsString(doc["solver_status"], root / "solver_status");
  }
  if (!info.solver_status.empty() && !IsRecordedSolverStatus(info.solver_status)) {
    (root / "solver_status")
        .Fail(fmt::format("unknown status {}; one of {} (or null for a heuristic's schedule)",
                          Quoted(info.solver_status), fmt::join(kRecordedSolverStatuses, ", ")));
  }
  if (doc.contains("lower_bound_cost") && !doc["lower_bound_cost"].is_null()) {
    info.lower_bound_cost = AsDouble(doc["lower_bound_cost"], root / "lower_bound_cost");
    if (*info.lower_bound_cost < 0) (root / "lower_bound_cost").Fail("must be >= 0");
    // A bound meets the cost up to rounding at most (RelativeGap's clamp), never exceeds it.
    const double cost = Simulate(graph, schedule).cost;
    if (*info.lower_bound_cost > cost + 1e-9 * std::max(1.0, cost)) {
      (root / "lower_bound_cost")
          .Fail(fmt::format("{:.6g} is above the schedule's own cost {:.6g} (re-simulated): a "
                            "valid lower bound never is",
                            *info.lower_bound_cost, cost));
    }
  }
  return {std::move(graph), std::move(schedule), std::move(info)};
}

bool IsRecordedSolverStatus(const std::string& status) {
  return std::find(std::begin(kRecordedSolverStatuses), std::end(kRecordedSolverStatuses),
                   status) != std::end(kRecordedSolverStatuses);
}

void SaveScheduleFile(const Graph& graph, const Schedule& schedule, const ScheduleInfo& info,
                      const std::string& path) {
  WriteFileAtomically(path, ScheduleToJson(graph, schedule, info));
}

ScheduleDocument LoadScheduleFile(const std::string& path) {
  return ScheduleFromJson(ReadFileText(path), path);
}

void CheckScheduleWithinBudget(const ScheduleDocument& document, const std::string& path,
                               const std::string& override_name) {
  const std::optional<int64_t> budget = document.info.budget_bytes;
  if (!budget) return;
  const int64_t peak = Simulate(document.graph, document.schedule).peak_bytes;
  if (peak > *budget) {
    throw InputError(fmt::format(
        "{}: the schedule peaks at {} ({} B), over the budget {} ({} B) it records; run it "
        "anyway with {}",
        path, FormatBytes(peak), peak, FormatBytes(*budget), *budget, override_name));
  }
}

}  // namespace remat
