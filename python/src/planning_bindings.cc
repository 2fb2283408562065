// pybind11 binding of src/planning: the C++ results that python/remat/planning.py turns into
// dataclasses. Long calls release the GIL and stop on Ctrl-C (interruptible.h); a Python model
// builder reacquires the GIL.
#include "planning_bindings.h"

#include <cmath>
#include <fmt/format.h>
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "core/graph.h"
#include "core/schedule.h"
#include "core/training_graph.h"
#include "interruptible.h"
#include "planning/budget.h"
#include "planning/budget_sweep.h"
#include "planning/max_batch.h"
#include "planning/plan_report.h"
#include "planning/strategy_runner.h"
#include "solvers/solver_types.h"
#include "model/fixed_memory.h"
#include "zoo/registry.h"

namespace py = pybind11;

namespace remat {
namespace {

// Python's names for the budget request's parts, so that messages name what the user wrote.
const BudgetOptionNames kPythonNames{.budget = "budget=", .memory = "memory=",
                                     .fixed = "fixed_bytes=", .device = "memory="};

SolverSettings Settings(double time_limit_s, int32_t threads, int32_t seed) {
  if (!(time_limit_s > 0)) throw UsageError("time_limit_s must be > 0");
  CheckThreads(threads);
  return {.time_limit_s = time_limit_s, .threads = threads, .seed = seed};
}

// Strategy names as Python gives them: a list, or "all" for every one that applies.
std::vector<std::string> Strategies(const std::vector<std::string>& names, const Graph& graph) {
  if (names.size() == 1 && names[0] == "all") return ParseStrategyList("all", graph);
  if (names.empty()) throw UsageError("strategies lists no strategy");
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ",") + name;
  return ParseStrategyList(list, graph);
}

Budget ResolveBudgetFor(const Graph& graph, const std::string& budget, const std::string& memory,
                        std::optional<int64_t> fixed_bytes) {
  return ResolveBudget({.budget_text = budget, .memory_text = memory,
                        .model_fixed_bytes = fixed_bytes, .names = kPythonNames},
                       NoRemat(graph).peak_bytes);
}

// Python's time_limit_s bounds the whole plan: the bound and every strategy together.
// gap (optimal's gap target) and patience_s (0: automatic) as the CLI's --gap and --patience.
PlanReport Plan(const Graph& graph, const std::string& budget, const std::string& memory,
                std::optional<int64_t> fixed_bytes, const std::vector<std::string>& strategies,
                double time_limit_s, int32_t threads, int32_t seed, bool lower_bound,
                double gap, double patience_s,
                const std::vector<std::pair<std::string, Schedule>>& starts) {
  if (!(gap >= 0 && gap <= 1)) throw UsageError("gap must be between 0 and 1");
  if (!(patience_s >= 0 && std::isfinite(patience_s))) {
    throw UsageError("patience_s must be a finite number > 0");
  }
  const BudgetRequest request{.budget_text = budget, .memory_text = memory,
                              .model_fixed_bytes = fixed_bytes, .names = kPythonNames};
  SolverSettings settings = Settings(time_limit_s, threads, seed);
  settings.relative_gap = gap;
  settings.patience_s = patience_s;
  for (const auto& [name, schedule] : starts) {
    const std::vector<std::string> problems = CheckSchedule(graph, schedule, 1);
    if (!problems.empty()) {
      throw UsageError(fmt::format("starts: the schedule '{}' is not one of this graph: {}", name,
                                   problems.front()));
    }
  }
  const PlanRequest plan{.strategies = Strategies(strategies, graph), .settings = settings,
                         .lower_bound = lower_bound, .total_time_limit_s = time_limit_s,
                         .starts = starts};
  std::optional<PlanReport> report;
  RunInterruptibly([&] { report = PlanAtBudget(graph, request, plan); });
  return std::move(*report);
}

std::vector<SweepPoint> Sweep(const Graph& graph, const std::vector<int64_t>& budgets,
                              const std::string& from_text, const std::string& to_text,
                              int32_t points, const std::vector<std::string>& strategies,
                              double time_limit_s, int32_t threads, int32_t seed,
                              bool lower_bound, double total_time_limit_s) {
  const std::vector<std::string> names = Strategies(strategies, graph);
  const SolverSettings settings = Settings(time_limit_s, threads, seed);
  if (points < 1) throw UsageError("points must be >= 1");
  for (int64_t b : budgets) {
    if (b < 0) throw UsageError("budgets must be >= 0 bytes");
  }
  std::vector<SweepPoint> swept;
  RunInterruptibly([&] {
    const std::vector<int64_t> grid =
        !budgets.empty() ? budgets
                         : ResolveBudgetGrid({.from_text = from_text, .to_text = to_text,
                                              .points = points, .from_name = "from_=",
                                              .to_name = "to="},
                                             graph, NoRemat(graph).peak_bytes);
    swept = RunBudgetSweep(graph, grid, names, settings, lower_bound, {}, total_time_limit_s);
  });
  return swept;
}

// The builder's result: (graph, fixed_bytes) or (graph, fixed_bytes, input_bytes).
BatchGraph ToBatchGraph(const py::object& built, int64_t batch) {
  const bool shaped = py::isinstance<py::tuple>(built) &&
                      (py::len(built) == 2 || py::len(built) == 3) &&
                      py::isinstance<Graph>(py::tuple(built)[0]) &&
                      py::isinstance<py::int_>(py::tuple(built)[1]);
  if (!shaped) {
    throw UsageError("build_graph(" + std::to_string(batch) +
                     ") must return (graph, fixed_bytes) or (graph, fixed_bytes, input_bytes)");
  }
  const py::tuple t(built);
  BatchGraph out{.graph = py::cast<Graph>(t[0]), .fixed_bytes = py::cast<int64_t>(t[1])};
  if (t.size() == 3) out.input_bytes = py::cast<int64_t>(t[2]);
  if (out.fixed_bytes < 0) throw UsageError("build_graph: fixed_bytes must be >= 0");
  return out;
}

MaxBatchReport MaxBatch(const py::function& build, int64_t memory_bytes,
                        const std::vector<std::string>& strategies, double max_overhead,
                        int64_t max_batch, double time_limit_s, int32_t threads, int32_t seed,
                        double total_time_limit_s) {
  if (memory_bytes <= 0) throw UsageError("memory must be > 0 bytes");
  if (max_batch < 1) throw UsageError("max_batch must be >= 1");
  if (max_overhead != 0 && !(max_overhead >= 1)) {
    throw UsageError("max_overhead must be >= 1 (or 0 for one extra forward pass)");
  }
  BatchGraphBuilder builder = [&build](int64_t batch) {
    py::gil_scoped_acquire acquire;
    return ToBatchGraph(build(batch), batch);
  };
  MaxBatchSearch search(builder, {.memory_bytes = memory_bytes,
                                  .settings = Settings(time_limit_s, threads, seed),
                                  .max_overhead = max_overhead, .max_batch = max_batch,
                                  .total_time_limit_s = total_time_limit_s});
  const std::vector<std::string> names = Strategies(strategies, search.Reference().built->graph);
  std::optional<MaxBatchReport> report;
  RunInterruptibly([&] { report = search.SearchAll(names); });
  return std::move(*report);
}

// A zoo model's training graph with its fixed memory under `optimizer`, as `remat solve
// --model` builds it without a device.
py::tuple ZooModel(const std::string& name, std::optional<int64_t> batch,
                   std::optional<std::pair<int64_t, int64_t>> resolution,
                   std::optional<int64_t> classes, const std::string& optimizer) {
  const std::optional<Optimizer> parsed = ParseOptimizer(optimizer);
  if (!parsed) throw UsageError("unknown optimizer '" + optimizer + "'; choose sgd, momentum or adam");
  ModelOptions options{.batch = batch, .classes = classes};
  if (resolution) options.resolution = Resolution{resolution->first, resolution->second};
  const BuiltModel built = BuildModel(name, options);
  const FixedMemory fixed = ComputeFixedMemory(built.info, *parsed);
  return py::make_tuple(BuildTrainingGraph(built.forward), fixed.total_bytes(), fixed.input_bytes);
}

void BindResults(py::module_& m) {
  py::class_<Budget>(m, "Budget")
      .def_readonly("activation_bytes", &Budget::activation_bytes)
      .def_readonly("device_bytes", &Budget::device_bytes)
      .def_readonly("fixed_bytes", &Budget::fixed_bytes);
  py::class_<PlanReport>(m, "_PlanReport")
      .def_readonly("budget", &PlanReport::budget)
      .def_property_readonly("no_remat_cost", [](const PlanReport& r) { return r.no_remat.cost; })
      .def_property_readonly("no_remat_peak_bytes",
                             [](const PlanReport& r) { return r.no_remat.peak_bytes; })
      .def_readonly("min_peak_bytes", &PlanReport::min_peak_bytes)
      .def_readonly("bound", &PlanReport::bound)
      .def_readonly("rows", &PlanReport::rows)
      .def_readonly("min_budget", &PlanReport::min_budget)
      .def_property_readonly("lower_bound", &PlanReport::lower_bound)
      .def("gap", &PlanReport::Gap, py::arg("row"));
  py::class_<MinBudget>(m, "_MinBudget")
      .def_readonly("peak_bytes", &MinBudget::peak_bytes)
      .def_readonly("lower_bound_bytes", &MinBudget::lower_bound_bytes)
      .def_property_readonly("gap", &MinBudget::gap)
      .def_readonly("bound_source", &MinBudget::bound_source)
      .def_readonly("found_by", &MinBudget::found_by)
      .def_readonly("note", &MinBudget::note)
      .def_readonly("seconds", &MinBudget::seconds)
      .def_property_readonly("schedule", [](const MinBudget& m) { return m.schedule.schedule; })
      .def_property_readonly("cost", [](const MinBudget& m) { return m.schedule.cost; });
  py::class_<SweepPoint>(m, "_SweepPoint")
      .def_readonly("budget_bytes", &SweepPoint::budget_bytes)
      .def_readonly("lower_bound", &SweepPoint::lower_bound)
      .def_readonly("lower_bound_status", &SweepPoint::lower_bound_status)
      .def_readonly("lower_bound_seconds", &SweepPoint::lower_bound_seconds)
      .def_readonly("rows", &SweepPoint::rows);
  py::class_<BatchProbe>(m, "_BatchProbe")
      .def_readonly("batch", &BatchProbe::batch)
      .def_readonly("budget_bytes", &BatchProbe::budget_bytes)
      .def_readonly("fixed_bytes", &BatchProbe::fixed_bytes)
      .def_property_readonly("outcome", [](const BatchProbe& p) { return BatchOutcomeName(p.outcome); })
      .def_readonly("reason", &BatchProbe::reason)
      .def_readonly("cost", &BatchProbe::cost)
      .def_readonly("overhead", &BatchProbe::overhead)
      .def_readonly("peak_bytes", &BatchProbe::peak_bytes)
      .def_readonly("seconds", &BatchProbe::seconds);
  py::class_<StrategySearch>(m, "_StrategySearch")
      .def_readonly("strategy", &StrategySearch::strategy)
      .def_readonly("max_batch", &StrategySearch::max_batch)
      .def_readonly("limit_reached", &StrategySearch::limit_reached)
      .def_property_readonly("certified", &StrategySearch::certified)
      .def_readonly("at_max", &StrategySearch::at_max)
      .def_readonly("next", &StrategySearch::next)
      .def_readonly("probes", &StrategySearch::probes)
      .def_readonly("seconds", &StrategySearch::seconds)
      .def_readonly("stopped_at_total_limit", &StrategySearch::stopped_at_total_limit);
  py::class_<MaxBatchReport>(m, "_MaxBatchReport")
      .def_readonly("results", &MaxBatchReport::results)
      .def_readonly("reference_batch", &MaxBatchReport::reference_batch)
      .def_readonly("cap_ratio", &MaxBatchReport::cap_ratio)
      .def("ratio", &MaxBatchReport::Ratio, py::arg("search"));
}

}  // namespace

void BindPlanning(py::module_& m) {
  BindResults(m);
  m.def("relative_gap", &RelativeGap, py::arg("cost"), py::arg("bound"),
        "(cost - bound) / cost clamped at 0: the one gap formula (NaN when cost <= 0).");
  m.def(
      "_check_settings",
      [](double time_limit_s, int32_t threads) { Settings(time_limit_s, threads, 1); },
      py::arg("time_limit_s"), py::arg("threads"),
      "UsageError unless time_limit_s > 0 and 1 <= threads <= 256 (the CLI's --threads range).");
  m.def("_resolve_budget", &ResolveBudgetFor, py::arg("graph"), py::arg("budget"),
        py::arg("memory"), py::arg("fixed_bytes"));
  m.def("_plan", &Plan, py::arg("graph"), py::arg("budget"), py::arg("memory"),
        py::arg("fixed_bytes"), py::arg("strategies"), py::arg("time_limit_s"),
        py::arg("threads"), py::arg("seed"), py::arg("lower_bound"), py::arg("gap"),
        py::arg("patience_s"), py::arg("starts") = std::vector<std::pair<std::string, Schedule>>{});
  m.def("_sweep", &Sweep, py::arg("graph"), py::arg("budgets"), py::arg("from_text"),
        py::arg("to_text"), py::arg("points"), py::arg("strategies"), py::arg("time_limit_s"),
        py::arg("threads"), py::arg("seed"), py::arg("lower_bound"),
        py::arg("total_time_limit_s"));
  m.def("_max_batch", &MaxBatch, py::arg("build_graph"), py::arg("memory_bytes"),
        py::arg("strategies"), py::arg("max_overhead"), py::arg("max_batch"),
        py::arg("time_limit_s"), py::arg("threads"), py::arg("seed"),
        py::arg("total_time_limit_s"));
  m.def("zoo_model", &ZooModel, py::arg("name"), py::kw_only(), py::arg("batch") = py::none(),
        py::arg("resolution") = py::none(), py::arg("classes") = py::none(),
        py::arg("optimizer") = "sgd",
        "A zoo model's training graph as `remat solve --model` builds it (no device): returns "
        "(graph, fixed_bytes, input_bytes) with the fixed memory under `optimizer`.");
}

}  // namespace remat
