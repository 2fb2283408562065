// Schedules in Python. A schedule built or saved from Python is checked against its graph first:
// the C++ core assumes a valid schedule of the same graph, and Python can pair anything.
#include "schedule_bindings.h"

#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.h"
#include "core/graph.h"
#include "core/plan.h"
#include "core/quoted.h"
#include "core/recompute.h"
#include "core/schedule.h"
#include "core/schedule_json.h"
#include "core/simulator.h"

namespace py = pybind11;

namespace remat {
namespace {

StageMatrix MatrixOf(const std::vector<std::vector<int32_t>>& rows, int32_t n, const char* name) {
  if (static_cast<int32_t>(rows.size()) != n) {
    throw InputError(std::string(name) + " has " + std::to_string(rows.size()) +
                     " rows; the graph has " + std::to_string(n) + " stages");
  }
  StageMatrix matrix(n, n);
  for (int32_t r = 0; r < n; ++r) {
    for (int32_t c : rows[r]) {
      if (c < 0 || c >= n) {
        throw InputError(std::string(name) + "[" + std::to_string(r) + "] names node " +
                         std::to_string(c) + ", which does not exist");
      }
      matrix.Set(r, c);
    }
  }
  return matrix;
}

// Schedules that reach the user are always checked: a hand-made one is validated here.
Schedule ScheduleOf(const Graph& graph, const std::vector<std::vector<int32_t>>& r_rows,
                    const std::vector<std::vector<int32_t>>& s_rows) {
  Schedule schedule{.R = MatrixOf(r_rows, graph.size(), "R"),
                    .S = MatrixOf(s_rows, graph.size(), "S")};
  const std::vector<std::string> problems = CheckSchedule(graph, schedule, 5);
  if (!problems.empty()) {
    std::string message = "invalid schedule:";
    for (const std::string& p : problems) message += "\n  " + p;
    throw InputError(message);
  }
  return schedule;
}

// Every call that pairs a graph and a schedule checks that they belong together.
const Schedule& Fitting(const Graph& graph, const Schedule& schedule) {
  if (schedule.R.rows() != graph.size() || schedule.S.rows() != graph.size()) {
    throw InputError("the schedule has " + std::to_string(schedule.stages()) +
                     " stages but the graph has " + std::to_string(graph.size()) +
                     " nodes: it was made for another graph");
  }
  return schedule;
}

}  // namespace

void BindSchedule(py::module_& m) {
  py::class_<Schedule>(m, "Schedule")
      .def(py::init(&ScheduleOf), py::arg("graph"), py::arg("R"), py::arg("S"),
           "R and S as, per stage, the list of nodes computed / held. InputError unless stage t "
           "computes node t for the first time (frontier-advancing), every input of a computed "
           "node is computed or held in its stage and every held value was held or computed in "
           "the stage before (correctness).")
      .def_property_readonly("stages", &Schedule::stages)
      .def_property_readonly("R", [](const Schedule& s) { return s.R.Rows(); })
      .def_property_readonly("S", [](const Schedule& s) { return s.S.Rows(); });

  m.def(
      "schedule_holding",
      [](const Graph& g, const std::vector<int32_t>& held_until,
         const std::vector<std::tuple<int32_t, int32_t, int32_t>>& runs) {
        const int32_t n = g.size();
        if (static_cast<int32_t>(held_until.size()) != n) {
          throw InputError("held_until has " + std::to_string(held_until.size()) +
                           " entries; the graph has " + std::to_string(n) + " nodes");
        }
        StageMatrix S(n, n);
        for (int32_t i = 0; i < n; ++i) {
          if (held_until[i] >= n) {
            throw InputError("held_until[" + std::to_string(i) + "] is stage " +
                             std::to_string(held_until[i]) + "; the graph has " +
                             std::to_string(n) + " stages");
          }
          if (held_until[i] > i) S.SetRun(i, i + 1, held_until[i]);
        }
        for (const auto& [node, first, last] : runs) {
          if (node < 0 || node >= n || first <= node || last >= n || first > last) {
            throw InputError("run (" + std::to_string(node) + ", " + std::to_string(first) +
                             ", " + std::to_string(last) + ") is not a node held over stages "
                             "after its own within the graph's " + std::to_string(n));
          }
          S.SetRun(node, first, last);
        }
        return ScheduleFromCheckpoints(g, std::move(S));
      },
      py::arg("graph"), py::arg("held_until"),
      py::arg("runs") = std::vector<std::tuple<int32_t, int32_t, int32_t>>{},
      "The cheapest correct schedule (docs/design.md §3, R from S) that holds node i's output "
      "from the stage after its own through stage held_until[i] (none when held_until[i] <= "
      "i), and each (node, first, last) of runs over stages first..last (a value recomputed "
      "at stage first - 1 and kept), and recomputes whatever else a stage reads.");

  m.def(
      "check_schedule",
      [](const Graph& g, const Schedule& s, size_t max_messages) {
        return CheckSchedule(g, Fitting(g, s), max_messages);
      },
      py::arg("graph"), py::arg("schedule"), py::arg("max_messages") = 20);

  m.def(
      "build_plan",
      [](const Graph& g, const Schedule& s) {
        std::vector<std::tuple<std::string, int32_t, int32_t>> ops;
        for (const Op& op : BuildPlan(g, Fitting(g, s))) {
          ops.emplace_back(OpKindName(op.kind), op.stage, op.node);
        }
        return ops;
      },
      py::arg("graph"), py::arg("schedule"),
      "The operation list: (kind, stage, node) with kind in allocate, compute, free.");
}

void BindSimulation(py::module_& m) {
  py::class_<SimulationResult>(m, "SimulationResult")
      .def_readonly("cost", &SimulationResult::cost)
      .def_readonly("peak_bytes", &SimulationResult::peak_bytes)
      .def_readonly("evaluations", &SimulationResult::evaluations)
      .def_readonly("evaluations_per_node", &SimulationResult::evaluations_per_node)
      .def_readonly("live_bytes_after_op", &SimulationResult::live_bytes_after_op);
  m.def(
      "simulate", [](const Graph& g, const Schedule& s) { return Simulate(g, Fitting(g, s)); },
      py::arg("graph"), py::arg("schedule"));
}

void BindScheduleFiles(py::module_& m) {
  py::class_<ScheduleDocument>(m, "ScheduleDocument")
      .def_readonly("graph", &ScheduleDocument::graph)
      .def_readonly("schedule", &ScheduleDocument::schedule)
      .def_property_readonly("strategy", [](const ScheduleDocument& d) { return d.info.strategy; })
      .def_property_readonly("budget_bytes",
                             [](const ScheduleDocument& d) { return d.info.budget_bytes; })
      // The proof fields as the file records them, not verified (docs/formats.md).
      .def_property_readonly(
          "solver_status", [](const ScheduleDocument& d) { return d.info.solver_status; },
          "The solver status the file records (recorded, not verified).")
      .def_property_readonly(
          "lower_bound_cost", [](const ScheduleDocument& d) { return d.info.lower_bound_cost; },
          "The lower bound the file records (recorded, not verified; never above the cost).");
  m.def(
      "load_schedule",
      [](const std::string& path, bool allow_over_budget) {
        ScheduleDocument document = LoadScheduleFile(path);
        if (!allow_over_budget) {
          CheckScheduleWithinBudget(document, path, "allow_over_budget=True");
        }
        return document;
      },
      py::arg("path"), py::kw_only(), py::arg("allow_over_budget") = false,
      "Reads a schedule file; InputError for a malformed one, one whose R and S break "
      "frontier-advancing or correctness (as for Schedule), an unknown solver_status, a "
      "lower_bound_cost above the re-simulated cost, or one whose re-simulated peak is over "
      "the budget it records (unless allow_over_budget=True).");
  m.def(
      "save_schedule",
      [](const Graph& g, const Schedule& s, const std::string& strategy,
         std::optional<int64_t> budget_bytes, const std::string& path,
         const std::string& solver_status, std::optional<double> lower_bound_cost) {
        if (!solver_status.empty() && !IsRecordedSolverStatus(solver_status)) {
          throw UsageError(fmt::format("solver_status must be '' or one of {}, got {}",
                                       fmt::join(kRecordedSolverStatuses, ", "),
                                       Quoted(solver_status)));
        }
        const SimulationResult sim = Simulate(g, Fitting(g, s));
        SaveScheduleFile(g, s,
                         {.strategy = strategy, .cost = sim.cost, .peak_bytes = sim.peak_bytes,
                          .budget_bytes = budget_bytes, .solver_status = solver_status,
                          .lower_bound_cost = lower_bound_cost},
                         path);
      },
      py::arg("graph"), py::arg("schedule"), py::arg("strategy"), py::arg("budget_bytes"),
      py::arg("path"), py::kw_only(), py::arg("solver_status") = "",
      py::arg("lower_bound_cost") = py::none(),
      "Writes a schedule file (docs/formats.md) as `remat solve -o` does: solver_status is the "
      "solver's verdict ('' for heuristics), lower_bound_cost the best bound known at the budget.");
}

}  // namespace remat
