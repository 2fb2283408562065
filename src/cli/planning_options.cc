// Options and JSON shared by the planning verbs.
#include "cli/planning_options.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/graph_json.h"

namespace remat {

double CommandSecondsLeft(const TimeLeft& command, double total_s) {
  if (!(total_s > 0)) return std::numeric_limits<double>::infinity();
  return std::max(0.0, total_s - command.Elapsed());
}

void AddBudgetRangeOptions(CLI::App& command, BudgetRange& range) {
  command.add_option("--points", range.points,
                     fmt::format("number of budgets in the range (default {})", range.points))
      ->check(CLI::Range(1, 1000));
  command.add_option("--from", range.from_text,
                     "smallest budget (default: the graph's minimum-peak lower bound); bytes, "
                     "units or a percentage of the no-remat peak");
  command.add_option("--to", range.to_text, "largest budget (default: the no-remat peak)");
}

void AddSolverSettingOptions(CLI::App& command, SolverSettings& settings) {
  command.add_option("--time-limit", settings.time_limit_s,
                     fmt::format("wall-clock seconds per solver run (default {:g})",
                                 settings.time_limit_s))
      ->check(FiniteRange(0.001, 1e7));
  command.add_option("--threads", settings.threads, "CBC threads (default 1)")
      ->check(CLI::Range(1, kMaxThreads));
  command.add_option("--gap", settings.relative_gap,
                     fmt::format("optimal's gap target: it stops once its schedule is proven "
                                 "within this relative gap of the lower bound (default {:g})",
                                 settings.relative_gap))
      ->check(FiniteRange(0.0, 1.0));
  command.add_option("--patience", settings.patience_s,
                     "optimal: seconds without improvement after which it stops (default: the "
                     "larger of 1 s and half the time its start and bound took)")
      ->check(FiniteRange(0.001, 1e7));
  command.add_option("--seed", settings.seed, "solver and rounding seed (default 1)");
  command.add_option("--eps", settings.eps,
                     "approx: the LP sees (1 - eps) of the budget (default 0.1)")
      ->check(FiniteRange(0.0, 0.99));
  command.add_option("--rounds", settings.rounds,
                     "approx-randomized: number of roundings (default 20)")
      ->check(CLI::Range(1, 100000));
  command.add_flag("--verbose", settings.verbose, "solver logs on stderr");
}

std::string RowStatus(const StrategyRow& row) {
  if (!row.result) return "no_schedule";
  return row.result->status == FitStatus::kFits ? "fits" : "over_budget";
}

nlohmann::json StrategyRowJson(const StrategyRow& row, double no_remat_cost,
                               const std::optional<double>& bound, double relative_gap) {
  std::string verdict = RowVerdictName(VerdictOf(row, bound, relative_gap));
  std::replace(verdict.begin(), verdict.end(), ' ', '_');
  nlohmann::json j = {{"strategy", row.strategy},
                      {"status", RowStatus(row)},
                      {"verdict", verdict},
                      {"solve_time_s", row.seconds}};
  if (!row.solver_status.empty()) j["solver_status"] = row.solver_status;
  if (row.own_bound) j["solver_lower_bound"] = *row.own_bound;
  if (row.result) {
    const StrategyResult& r = *row.result;
    j["cost"] = r.cost;
    j["overhead"] = r.cost / no_remat_cost;
    j["peak_bytes"] = r.peak_bytes;
    j["parameters"] = r.parameters;
  }
  if (const auto gap = GapToBound(row, bound)) j["gap_to_lower_bound"] = *gap;
  if (!row.note.empty()) j["note"] = row.note;
  if (!row.stop_reason.empty()) j["stop_reason"] = row.stop_reason;
  return j;
}

nlohmann::json SolverSettingsJson(const SolverSettings& settings) {
  return {{"time_limit_s", settings.time_limit_s}, {"threads", settings.threads},
          {"relative_gap", settings.relative_gap}, {"patience_s", settings.patience_s},
          {"seed", settings.seed},
          {"eps", settings.eps},                   {"rounds", settings.rounds}};
}

nlohmann::json GraphSummaryJson(const Graph& graph) {
  return {{"name", graph.name()},
          {"nodes", graph.size()},
          {"edges", graph.edges().size()},
          {"cost_unit", graph.cost_unit()},
          {"total_cost", graph.total_cost()},
          {"fingerprint", GraphFingerprint(graph)}};
}

std::string NumberOrMissing(const std::optional<double>& value, const std::string& missing) {
  return value ? fmt::format("{:.10g}", *value) : missing;
}

}  // namespace remat
