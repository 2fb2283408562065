// libFuzzer entry point: any bytes are read as a schedule file (ScheduleFromJson), then used as
// `remat plot schedule` and `remat-run step --schedule` use one. The reader must either return
// a document whose schedule passes CheckSchedule or throw InputError; anything else (a crash, a
// sanitizer report, another exception, such as the simulator's InternalError) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "core/cost_profile.h"
#include "core/errors.h"
#include "core/plan.h"
#include "core/schedule.h"
#include "core/schedule_json.h"
#include "core/simulator.h"
#include "core/training_graph.h"
#include "graph_checks.h"

namespace {

using namespace remat;

bool SameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool SameInfo(const ScheduleInfo& a, const ScheduleInfo& b) {
  return a.strategy == b.strategy && SameBits(a.cost, b.cost) && a.peak_bytes == b.peak_bytes &&
         a.budget_bytes == b.budget_bytes && a.solver_status == b.solver_status &&
         a.lower_bound_cost.has_value() == b.lower_bound_cost.has_value() &&
         (!a.lower_bound_cost || SameBits(*a.lower_bound_cost, *b.lower_bound_cost));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fuzz::Require;
  // The paper's linear graph with 2 forward nodes: 5 nodes, as in the seed corpus.
  static const Graph fixed = LinearGraph(2);
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::optional<ScheduleDocument> doc;
  try {
    doc.emplace(ScheduleFromJson(text, "fuzz.json"));
  } catch (const InputError&) {
    return 0;  // rejected with a message: the expected outcome for nearly every input
  }
  const Graph& graph = doc->graph;
  const Schedule& schedule = doc->schedule;
  // The reader promises a schedule that fits its graph and satisfies docs/design.md §3.
  Require(schedule.stages() == graph.size());
  Require(CheckSchedule(graph, schedule).empty());
  fuzz::CheckAcceptedGraph(graph);
  // What `remat plot schedule` does with it: a plan and a simulation, which throw
  // InternalError (a bug, left to escape) if the checked schedule is still wrong.
  const Plan plan = BuildPlan(graph, schedule);
  const SimulationResult sim = Simulate(graph, plan);
  Require(static_cast<int32_t>(sim.evaluations_per_node.size()) == graph.size());
  Require(sim.peak_bytes >= MinimumPeakLowerBound(graph) && sim.peak_bytes <= graph.total_bytes());
  // What `remat-run step --schedule` does first: compare structures.
  Require(StructureFingerprint(graph).size() == 16);
  // A loaded schedule saves and loads again unchanged.
  const std::string saved = ScheduleToJson(graph, schedule, doc->info);
  std::optional<ScheduleDocument> back;
  try {
    back.emplace(ScheduleFromJson(saved, "round-trip.json"));
  } catch (const InputError&) {
    __builtin_trap();  // remat wrote a schedule file it cannot read
  }
  Require(back->schedule == schedule);
  Require(fuzz::SameGraph(back->graph, graph));
  Require(SameInfo(back->info, doc->info));
  // The same matrices against another graph of the same size: CheckSchedule must answer (with
  // or without violations) rather than crash, and a schedule it accepts must simulate.
  if (schedule.stages() == fixed.size()) {
    if (CheckSchedule(fixed, schedule).empty()) Simulate(fixed, schedule);
  }
  return 0;
}
