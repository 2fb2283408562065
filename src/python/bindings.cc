// pybind11 binding of the planner: graphs, schedules, the simulator, strategies and solvers,
// size parsing and schedule files. The Python package (python/remat) wraps it; errors cross
// as remat.InputError, remat.UsageError and remat.InternalError, never as a crash.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/graph.h"
#include "core/graph_json.h"
#include "core/plan.h"
#include "core/schedule.h"
#include "core/schedule_json.h"
#include "core/simulator.h"
#include "core/sizes.h"
#include "planning/size_parsing.h"
#include "solvers/checkmate_solver.h"
#include "solvers/lower_bound.h"
#include "python/planning_bindings.h"
#include "planning/strategy_runner.h"

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

// Every call that pairs a graph and a schedule checks that they belong together: the C++ core
// assumes it, and Python can pair anything.
const Schedule& Fitting(const Graph& graph, const Schedule& schedule) {
  if (schedule.R.rows() != graph.size() || schedule.S.rows() != graph.size()) {
    throw InputError("the schedule has " + std::to_string(schedule.stages()) +
                     " stages but the graph has " + std::to_string(graph.size()) +
                     " nodes: it was made for another graph");
  }
  return schedule;
}

int32_t NodeId(const Graph& graph, int32_t id) {
  if (id < 0 || id >= graph.size()) {
    throw InputError("node " + std::to_string(id) + " does not exist (the graph has " +
                     std::to_string(graph.size()) + " nodes)");
  }
  return id;
}

}  // namespace
}  // namespace remat

PYBIND11_MODULE(_core, m) {
  using namespace remat;
  m.doc() = "remat's C++ planner: graphs, schedules, simulator, strategies and solvers";

  // remat.Error is the base of every error the planner raises; UsageError also takes
  // std::invalid_argument (malformed sizes). Later registrations are tried first.
  auto& error = py::register_exception<std::runtime_error>(m, "Error", PyExc_RuntimeError);
  auto& input = py::register_exception<InputError>(m, "InputError", error.ptr());
  py::register_exception<InfeasibleBudgetError>(m, "InfeasibleBudgetError", input.ptr());
  auto& usage = py::register_exception<UsageError>(m, "UsageError", error.ptr());
  py::register_exception<InternalError>(m, "InternalError", error.ptr());
  static PyObject* usage_error = usage.ptr();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(usage_error, e.what());
    }
  });

  py::enum_<NodeKind>(m, "NodeKind")
      .value("forward", NodeKind::kForward)
      .value("loss", NodeKind::kLoss)
      .value("backward", NodeKind::kBackward)
      .value("unlabeled", NodeKind::kUnlabeled);

  py::class_<Node>(m, "Node")
      .def(py::init([](std::string name, NodeKind kind, double cost, int64_t bytes,
                       int32_t forward_of, int64_t workspace_bytes) {
             return Node{.name = std::move(name), .kind = kind, .cost = cost, .bytes = bytes,
                         .workspace_bytes = workspace_bytes, .forward_of = forward_of};
           }),
           py::arg("name"), py::arg("kind"), py::arg("cost"), py::arg("bytes"),
           py::arg("forward_of") = -1, py::arg("workspace_bytes") = 0)
      .def_readonly("name", &Node::name)
      .def_readonly("kind", &Node::kind)
      .def_readonly("cost", &Node::cost)
      .def_readonly("bytes", &Node::bytes)
      .def_readonly("workspace_bytes", &Node::workspace_bytes)
      .def_readonly("forward_of", &Node::forward_of)
      .def("__repr__", [](const Node& n) {
        return "Node(" + n.name + ", " + NodeKindName(n.kind) + ", cost=" +
               std::to_string(n.cost) + ", bytes=" + std::to_string(n.bytes) + ")";
      });

  py::class_<Graph>(m, "Graph")
      .def(py::init([](std::vector<Node> nodes,
                       const std::vector<std::pair<int32_t, int32_t>>& edges,
                       std::string cost_unit, std::string name) {
             std::vector<Edge> e;
             e.reserve(edges.size());
             for (const auto& [src, dst] : edges) e.push_back({.src = src, .dst = dst});
             return Graph(std::move(nodes), std::move(e), std::move(cost_unit), std::move(name));
           }),
           py::arg("nodes"), py::arg("edges"), py::arg("cost_unit") = "unit",
           py::arg("name") = "", "Validates the DAG; InputError names what is wrong.")
      .def_property_readonly("size", &Graph::size)
      .def("__len__", &Graph::size)
      .def_property_readonly("nodes", &Graph::nodes)
      .def_property_readonly("edges",
                             [](const Graph& g) {
                               std::vector<std::pair<int32_t, int32_t>> out;
                               for (const Edge& e : g.edges()) out.emplace_back(e.src, e.dst);
                               return out;
                             })
      .def_property_readonly("cost_unit", &Graph::cost_unit)
      .def_property_readonly("name", &Graph::name)
      .def_property_readonly("loss", &Graph::loss)
      .def_property_readonly("has_training_structure", &Graph::has_training_structure)
      .def("preds", [](const Graph& g, int32_t id) { return g.preds(NodeId(g, id)); })
      .def("succs", [](const Graph& g, int32_t id) { return g.succs(NodeId(g, id)); })
      .def_property_readonly("total_cost", &Graph::total_cost)
      .def_property_readonly("total_bytes", &Graph::total_bytes)
      .def("to_json", &GraphToJson)
      .def_static("from_json", &GraphFromJson, py::arg("text"), py::arg("source") = "<string>")
      .def_static("load", &LoadGraphFile, py::arg("path"))
      .def("save", [](const Graph& g, const std::string& path) { SaveGraphFile(g, path); },
           py::arg("path"))
      .def_property_readonly("fingerprint", &GraphFingerprint)
      .def("__repr__", [](const Graph& g) {
        return "Graph(" + (g.name().empty() ? std::string("unnamed") : g.name()) + ", " +
               std::to_string(g.size()) + " nodes, " + std::to_string(g.edges().size()) +
               " edges)";
      });

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
      "check_schedule",
      [](const Graph& g, const Schedule& s, size_t max_messages) {
        return CheckSchedule(g, Fitting(g, s), max_messages);
      },
      py::arg("graph"), py::arg("schedule"),
        py::arg("max_messages") = 20);

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

  py::class_<SimulationResult>(m, "SimulationResult")
      .def_readonly("cost", &SimulationResult::cost)
      .def_readonly("peak_bytes", &SimulationResult::peak_bytes)
      .def_readonly("evaluations", &SimulationResult::evaluations)
      .def_readonly("evaluations_per_node", &SimulationResult::evaluations_per_node)
      .def_readonly("live_bytes_after_op", &SimulationResult::live_bytes_after_op);
  m.def(
      "simulate", [](const Graph& g, const Schedule& s) { return Simulate(g, Fitting(g, s)); },
      py::arg("graph"),
        py::arg("schedule"));

  m.def(
      "resolve_size",
      [](const std::string& text, int64_t reference_bytes) {
        return ResolveSize(ParseSize(text), reference_bytes);
      },
      py::arg("text"), py::arg("reference_bytes"),
      "Bytes for '16GiB', '512MB', '1e9' or '60%' (of reference_bytes); UsageError if malformed.");
  m.def("format_bytes", &FormatBytes, py::arg("bytes"));
  m.def("minimum_peak_lower_bound", &MinimumPeakLowerBound, py::arg("graph"));

  m.def("strategy_names", &StrategyNames);
  m.def("needs_training_structure", &NeedsTrainingStructure, py::arg("name"));

  py::class_<StrategyRow>(m, "StrategyRow")
      .def_readonly("strategy", &StrategyRow::strategy)
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
        if (threads < 1) throw UsageError("threads must be >= 1");
        if (budget_bytes < 0) throw UsageError("budget_bytes must be >= 0");
        return RunStrategy(name, graph, budget_bytes,
                           {.time_limit_s = time_limit_s, .threads = threads, .seed = seed,
                            .verbose = verbose});
      },
      py::arg("name"), py::arg("graph"), py::arg("budget_bytes"), py::kw_only(),
      py::arg("time_limit_s") = 60.0, py::arg("threads") = 1, py::arg("seed") = 1,
      py::arg("verbose") = false, py::call_guard<py::gil_scoped_release>(),
      "Runs one strategy; the returned schedule has been re-simulated.");

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
        return LpLowerBound(graph, budget_bytes, {.time_limit_s = time_limit_s});
      },
      py::arg("graph"), py::arg("budget_bytes"), py::kw_only(), py::arg("time_limit_s") = 60.0,
      py::call_guard<py::gil_scoped_release>(),
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
        if (threads < 1) throw UsageError("threads must be >= 1");
        if (budget_bytes < 0) throw UsageError("budget_bytes must be >= 0");
        return BestLowerBound(graph, budget_bytes, {.time_limit_s = time_limit_s, .threads = threads});
      },
      py::arg("graph"), py::arg("budget_bytes"), py::kw_only(), py::arg("time_limit_s") = 60.0,
      py::arg("threads") = 1, py::call_guard<py::gil_scoped_release>(),
      "The best valid lower bound that fits the time: the absence-gap bound, and the LP "
      "relaxation when its model is small enough (status 'infeasible' proves that no schedule "
      "fits).");

  py::class_<ScheduleDocument>(m, "ScheduleDocument")
      .def_readonly("graph", &ScheduleDocument::graph)
      .def_readonly("schedule", &ScheduleDocument::schedule)
      .def_property_readonly("strategy", [](const ScheduleDocument& d) { return d.info.strategy; })
      .def_property_readonly("budget_bytes",
                             [](const ScheduleDocument& d) { return d.info.budget_bytes; });
  m.def("load_schedule", &LoadScheduleFile, py::arg("path"),
        "Reads a schedule file; InputError for a malformed one or one whose R and S break "
        "frontier-advancing or correctness (as for Schedule).");
  m.def(
      "save_schedule",
      [](const Graph& g, const Schedule& s, const std::string& strategy,
         std::optional<int64_t> budget_bytes, const std::string& path) {
        const SimulationResult sim = Simulate(g, Fitting(g, s));
        SaveScheduleFile(g, s,
                         {.strategy = strategy, .cost = sim.cost, .peak_bytes = sim.peak_bytes,
                          .budget_bytes = budget_bytes},
                         path);
      },
      py::arg("graph"), py::arg("schedule"), py::arg("strategy"), py::arg("budget_bytes"),
      py::arg("path"));

  BindPlanning(m);
}
