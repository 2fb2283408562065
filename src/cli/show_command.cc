// remat show: a schedule file read back as text, re-simulated (the simulator, not the file,
// gives every figure).
#include "cli/show_command.h"

#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/output.h"
#include "core/quoted.h"
#include "core/schedule_json.h"
#include "core/simulator.h"
#include "core/sizes.h"
#include "planning/plan_report.h"
#include "solvers/solver_types.h"

namespace remat {
namespace {

struct ShowOptions {
  std::string schedule_path;
  bool json = false;
};

// A node's computations after its first: the stages they happen in. Stage t of a staged
// schedule ends by computing node t, so a recomputation in stage t is made for node t.
struct Recomputation {
  int32_t node = 0;
  std::vector<int32_t> stages;
};

std::vector<Recomputation> Recomputations(const Schedule& schedule) {
  std::vector<Recomputation> out;
  const int32_t n = schedule.R.cols();
  for (int32_t i = 0; i < n; ++i) {
    Recomputation r{.node = i};
    bool first = true;
    for (int32_t t = 0; t < schedule.stages(); ++t) {
      if (!schedule.R.Get(t, i)) continue;
      if (!first) r.stages.push_back(t);
      first = false;
    }
    if (!r.stages.empty()) out.push_back(std::move(r));
  }
  return out;
}

std::string NodeLabel(const Graph& graph, int32_t id) {
  const std::string& name = graph.node(id).name;
  return name.empty() ? fmt::format("#{}", id) : fmt::format("{} (#{})", name, id);
}

// "stage 58 (for conv1_grad)" per recomputation.
std::string StagesText(const Graph& graph, const std::vector<int32_t>& stages) {
  std::vector<std::string> parts;
  for (int32_t t : stages) {
    const std::string& target = graph.node(t).name;
    parts.push_back(target.empty() ? fmt::format("{}", t) : fmt::format("{} ({})", t, target));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// What the file says of its proof, never shown as proven: remat show does not solve again.
std::string Verdict(const ScheduleInfo& info) {
  if (info.solver_status.empty()) return "heuristic, not proven";
  return fmt::format("the file records: {}; {}", SolveStatusPhrase(info.solver_status),
                     kNotVerified);
}

void PrintText(const ShowOptions& options, const ScheduleDocument& doc,
               const SimulationResult& sim, const std::vector<Recomputation>& recomputed) {
  const Graph& graph = doc.graph;
  const NoRematReference no_remat = NoRemat(graph);
  fmt::print("schedule: {} ({}, {} nodes)\n", options.schedule_path,
             graph.name().empty() ? "unnamed graph" : graph.name(), graph.size());
  fmt::print("strategy: {} ({})\n",
             doc.info.strategy.empty() ? "unknown" : Printable(doc.info.strategy),
             Verdict(doc.info));
  fmt::print("cost: {:.6g}, {} the no-remat cost {:.6g}", sim.cost,
             FormatRatio(sim.cost, no_remat.cost), no_remat.cost);
  if (doc.info.lower_bound_cost) {
    fmt::print("; lower bound {:.6g} ({}), gap {}", *doc.info.lower_bound_cost, kNotVerified,
               FormatPercent(RelativeGap(sim.cost, *doc.info.lower_bound_cost), 1.0));
  }
  fmt::print("\npeak: {} ({} of the no-remat peak {})", FormatBytes(sim.peak_bytes),
             FormatPercent(static_cast<double>(sim.peak_bytes),
                           static_cast<double>(no_remat.peak_bytes)),
             FormatBytes(no_remat.peak_bytes));
  if (doc.info.budget_bytes) {
    fmt::print("; budget {}{}", FormatBytes(*doc.info.budget_bytes),
               sim.peak_bytes > *doc.info.budget_bytes ? ", the schedule is OVER it" : "");
  }
  fmt::print("\n\n");
  if (recomputed.empty()) {
    fmt::print("nothing is recomputed: every node is computed once\n");
    return;
  }
  fmt::print("{} of {} nodes are recomputed, {} extra computations:\n", recomputed.size(),
             graph.size(), sim.evaluations - graph.size());
  std::vector<std::vector<std::string>> rows;
  for (const Recomputation& r : recomputed) {
    rows.push_back({NodeLabel(graph, r.node), NodeKindName(graph.node(r.node).kind),
                    fmt::format("{:.6g}", graph.node(r.node).cost * r.stages.size()),
                    StagesText(graph, r.stages)});
  }
  fmt::print("{}", FormatTable({"node", "kind", "extra cost", "recomputed in stage (for node)"},
                               rows));
}

void PrintJson(const ScheduleDocument& doc, const SimulationResult& sim,
               const std::vector<Recomputation>& recomputed) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const Recomputation& r : recomputed) {
    nodes.push_back({{"node", r.node}, {"name", doc.graph.node(r.node).name},
                     {"stages", r.stages}});
  }
  const NoRematReference no_remat = NoRemat(doc.graph);
  nlohmann::json out = {
      {"schema", "remat.show/1"},
      {"graph", doc.graph.name()},
      {"nodes", doc.graph.size()},
      {"strategy", doc.info.strategy},
      {"solver_status", doc.info.solver_status},
      {"cost", sim.cost},
      {"peak_bytes", sim.peak_bytes},
      {"no_remat_cost", no_remat.cost},
      {"no_remat_peak_bytes", no_remat.peak_bytes},
      {"budget_bytes", doc.info.budget_bytes ? nlohmann::json(*doc.info.budget_bytes)
                                             : nlohmann::json(nullptr)},
      {"lower_bound_cost", doc.info.lower_bound_cost ? nlohmann::json(*doc.info.lower_bound_cost)
                                                     : nlohmann::json(nullptr)},
      {"proof", doc.info.solver_status.empty() && !doc.info.lower_bound_cost
                    ? nlohmann::json(nullptr)
                    : nlohmann::json(kNotVerified)},
      {"evaluations", sim.evaluations},
      {"recomputed", nodes}};
  fmt::print("{}\n", out.dump(2));
}

void RunShow(const ShowOptions& options) {
  const ScheduleDocument doc = LoadScheduleFile(options.schedule_path);
  const SimulationResult sim = Simulate(doc.graph, doc.schedule);
  const std::vector<Recomputation> recomputed = Recomputations(doc.schedule);
  if (options.json) {
    PrintJson(doc, sim, recomputed);
  } else {
    PrintText(options, doc, sim, recomputed);
  }
}

}  // namespace

void AddShowCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ShowOptions>();
  CLI::App* show = app.add_subcommand(
      "show", "a schedule file as text: cost, peak, proof and which nodes are recomputed where");
  show->add_option("FILE", options->schedule_path, "schedule JSON (remat solve -o)")->required();
  show->add_flag("--json", options->json, "machine-readable output (schema remat.show/1)");
  show->callback([options, &exit_code] {
    RunShow(*options);
    exit_code = kExitOk;
  });
}

}  // namespace remat
