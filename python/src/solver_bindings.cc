// Strategies and lower bounds in Python. They run with the GIL released and stop on Ctrl-C
// (interruptible.h); their options are checked here (UsageError), since Python can pass any
// number.
#include "solver_bindings.h"

#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>

#include "core/errors.h"
#include "core/graph.h"
#include "core/schedule.h"
#include "interruptible.h"
#include "solvers/checkmate_solver.h"
#include "solvers/lower_bound.h"
#include "solvers/solver_types.h"
#include "planning/strategy_runner.h"

namespace py = pybind11;

namespace remat {

void BindStrategies(py::module_& m) {
  m.def("strategy_names", &StrategyNames);
  m.def("strategy_applies", &StrategyApplies, py::arg("name"), py::arg("graph"));

  py::class_<StrategyRow>(m, "StrategyRow")
      .def_readonly("strategy", &StrategyRow::strategy)
      .def_readonly("stop_reason", &StrategyRow::stop_reason)
      .def_property_readonly("fits", &StrategyRow::fits)
      .def_property_readonly("found", [](const StrategyRow& r) { return r.result.has_value(); })
      .def_property_readonly("cost",
                             [](const StrategyRow& r) { return r.result ? r.result->cost : 0.0; })
      .def_property_readonly("peak_bytes",
                             [](const StrategyRow& r) -> int64_t {
                               return r.result ? r.result->peak_bytes : 0;
                             })
      .def_property_readonly("parameters",
                             [](const StrategyRow& r) -> std::string {
                               return r.result ? r.result->parameters : "";
                             })
      .def_property_readonly("schedule",
                             [](const StrategyRow& r) -> std::optional<Schedule> {
                               if (!r.result) return std::nullopt;
                               return r.result->schedule;
                             })
      .def_readonly("solver_status", &StrategyRow::solver_status)
      .def_readonly("own_bound", &StrategyRow::own_bound)
      .def_readonly("seconds", &StrategyRow::seconds)
      .def_readonly("note", &StrategyRow::note);

  m.def(
      "run_strategy",
      [](const std::string& name, const Graph& graph, int64_t budget_bytes, double time_limit_s,
         int32_t threads, int32_t seed, bool verbose) {
        if (!(time_limit_s > 0)) throw UsageError("time_limit_s must be > 0");
        CheckThreads(threads);
        if (budget_bytes < 0) throw UsageError("budget_bytes must be >= 0");
        std::optional<StrategyRow> row;
        RunInterruptibly([&] {
          row = RunStrategy(name, graph, budget_bytes,
                            {.time_limit_s = time_limit_s, .threads = threads, .seed = seed,
                             .verbose = verbose});
        });
        return std::move(*row);
      },
      py::arg("name"), py::arg("graph"), py::arg("budget_bytes"), py::kw_only(),
      py::arg("time_limit_s") = 60.0, py::arg("threads") = 1, py::arg("seed") = 1,
      py::arg("verbose") = false,
      "Runs one strategy; the returned schedule has been re-simulated.");
}

void BindBounds(py::module_& m) {
  m.def("minimum_peak_lower_bound", &MinimumPeakLowerBound, py::arg("graph"));

  py::class_<LowerBound>(m, "LowerBound")
      .def_property_readonly("status",
                             [](const LowerBound& b) { return SolveStatusName(b.status); })
      .def_readonly("cost", &LowerBound::cost)
      .def_readonly("solve_time_s", &LowerBound::solve_time_s)
      .def_readonly("message", &LowerBound::message);
  m.def(
      "lp_lower_bound",
      [](const Graph& graph, int64_t budget_bytes, double time_limit_s) {
        if (!(time_limit_s > 0)) throw UsageError("time_limit_s must be > 0");
        LowerBound bound;
        RunInterruptibly(
            [&] { bound = LpLowerBound(graph, budget_bytes, {.time_limit_s = time_limit_s}); });
        return bound;
      },
      py::arg("graph"), py::arg("budget_bytes"), py::kw_only(), py::arg("time_limit_s") = 60.0,
      "The LP relaxation at the full budget: a lower bound on every schedule's cost.");

  py::class_<BestBound>(m, "BestBound")
      .def_property_readonly("status", [](const BestBound& b) { return SolveStatusName(b.status); })
      .def_readonly("cost", &BestBound::cost)
      .def_readonly("source", &BestBound::source)
      .def_readonly("note", &BestBound::note)
      .def_readonly("seconds", &BestBound::seconds);
  m.def(
      "best_lower_bound",
      [](const Graph& graph, int64_t budget_bytes, double time_limit_s, int32_t threads) {
        if (!(time_limit_s > 0)) throw UsageError("time_limit_s must be > 0");
        CheckThreads(threads);
        if (budget_bytes < 0) throw UsageError("budget_bytes must be >= 0");
        BestBound bound;
        RunInterruptibly([&] {
          bound = BestLowerBound(graph, budget_bytes,
                                 {.time_limit_s = time_limit_s, .threads = threads});
        });
        return bound;
      },
      py::arg("graph"), py::arg("budget_bytes"), py::kw_only(), py::arg("time_limit_s") = 60.0,
      py::arg("threads") = 1,
      "The best valid lower bound that fits the time: the absence-gap bound, and the LP "
      "relaxation when its model is small enough (status 'infeasible' proves that no schedule "
      "fits).");
}

}  // namespace remat
