// Strategies over a budget grid, with the LP lower bound at each budget.
#include "cli/budget_sweep.h"

#include <chrono>
#include <limits>

#include <algorithm>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/sizes.h"
#include "core/graph_json.h"
#include "solvers/checkmate_solver.h"
#include "solvers/lower_bound.h"

namespace remat {
namespace {

int64_t ParseRangeEnd(const std::string& text, const std::string& option, int64_t reference) {
  try {
    return ResolveSize(ParseSize(text), reference);
  } catch (const std::invalid_argument& error) {
    throw UsageError(fmt::format("{}: {}", option, error.what()));
  }
}

}  // namespace

void AddBudgetRangeOptions(CLI::App& command, BudgetRangeArgs& args) {
  command.add_option("--points", args.points,
                     fmt::format("number of budgets in the range (default {})", args.points))
      ->check(CLI::Range(1, 1000));
  command.add_option("--from", args.from_text,
                     "smallest budget (default: the graph's minimum-peak lower bound); bytes, "
                     "units or a percentage of the no-remat peak");
  command.add_option("--to", args.to_text, "largest budget (default: the no-remat peak)");
}

void AddSolverSettingOptions(CLI::App& command, SolverSettings& settings) {
  command.add_option("--time-limit", settings.time_limit_s,
                     fmt::format("wall-clock seconds per solver run (default {:g})",
                                 settings.time_limit_s))
      ->check(FiniteRange(0.001, 1e7));
  command.add_option("--threads", settings.threads, "CBC threads (default 1)")
      ->check(CLI::Range(1, 256));
  command.add_option("--gap", settings.relative_gap,
                     "relative optimality gap at which CBC stops (default 1e-4)")
      ->check(FiniteRange(0.0, 1.0));
  command.add_option("--seed", settings.seed, "solver and rounding seed (default 1)");
  command.add_option("--eps", settings.eps,
                     "approx: the LP sees (1 - eps) of the budget (default 0.1)")
      ->check(FiniteRange(0.0, 0.99));
  command.add_option("--rounds", settings.rounds,
                     "approx-randomized: number of roundings (default 20)")
      ->check(CLI::Range(1, 100000));
  command.add_flag("--verbose", settings.verbose, "solver logs on stderr");
}

std::vector<int64_t> BudgetGrid(int64_t from_bytes, int64_t to_bytes, int32_t points) {
  std::vector<int64_t> budgets;
  if (points <= 1 || from_bytes == to_bytes) return {to_bytes};
  const long double span = static_cast<long double>(to_bytes - from_bytes);
  for (int32_t i = 0; i < points; ++i) {
    const int64_t step =
        static_cast<int64_t>(span * static_cast<long double>(i) / static_cast<long double>(points - 1));
    const int64_t budget = i + 1 == points ? to_bytes : from_bytes + step;
    if (budgets.empty() || budgets.back() != budget) budgets.push_back(budget);
  }
  return budgets;
}

std::vector<int64_t> ResolveBudgetGrid(const BudgetRangeArgs& args, const Graph& graph,
                                       int64_t no_remat_peak_bytes) {
  const int64_t from = args.from_text.empty()
                           ? std::min(MinimumPeakLowerBound(graph), no_remat_peak_bytes)
                           : ParseRangeEnd(args.from_text, "--from", no_remat_peak_bytes);
  const int64_t to = args.to_text.empty() ? no_remat_peak_bytes
                                          : ParseRangeEnd(args.to_text, "--to", no_remat_peak_bytes);
  if (from > to) {
    throw UsageError(fmt::format("the budget range is empty: --from {} B is above --to {} B", from, to));
  }
  if (from <= 0) throw UsageError("--from must be a positive size");
  return BudgetGrid(from, to, args.points);
}

int64_t SweepWorkItems(size_t budgets, size_t strategies, bool lower_bound) {
  return static_cast<int64_t>(budgets * (strategies + (lower_bound ? 1 : 0)));
}

std::vector<SweepPoint> RunBudgetSweep(const Graph& graph, const std::vector<int64_t>& budgets,
                                       const std::vector<std::string>& strategies,
                                       const SolverSettings& settings, bool lower_bound,
                                       ProgressLine& progress, double total_time_limit_s) {
  const auto begin = std::chrono::steady_clock::now();
  auto left = [&] {
    if (total_time_limit_s <= 0) return std::numeric_limits<double>::infinity();
    return total_time_limit_s -
           std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  };
  SolverSettings quiet = settings;
  quiet.progress = false;  // the sweep's own line replaces the solver's
  std::vector<SweepPoint> points;
  for (size_t b = 0; b < budgets.size(); ++b) {
    SweepPoint point;
    point.budget_bytes = budgets[b];
    const std::string where =
        fmt::format("at {} (budget {}/{})", FormatBytes(point.budget_bytes), b + 1, budgets.size());
    if (lower_bound && left() > 0) {
      progress.Start("lower bound " + where);
      const BestBound best = BestLowerBound(
          graph, point.budget_bytes,
          {.time_limit_s = std::max(0.5, std::min(settings.time_limit_s, left())),
           .threads = settings.threads});
      point.lower_bound_status = SolveStatusName(best.status);
      point.lower_bound_seconds = best.seconds;
      if (best.status == SolveStatus::kOptimal) point.lower_bound = best.cost;
      progress.Finish();
    } else {
      point.lower_bound_status = lower_bound ? "skipped: --total-time-limit spent" : "skipped";
    }
    SharedWork shared;  // the roundings solve their LP once per budget; optimal reuses the bound
    shared.lower_bound = point.lower_bound;
    for (const std::string& name : strategies) {
      progress.Start(name + " " + where);
      if (left() <= 0) {
        point.rows.push_back({.strategy = name, .solver_status = "skipped",
                              .note = "skipped: --total-time-limit spent"});
      } else {
        SolverSettings capped = quiet;
        capped.time_limit_s = std::max(0.5, std::min(quiet.time_limit_s, left()));
        point.rows.push_back(RunStrategy(name, graph, point.budget_bytes, capped, &shared));
      }
      progress.Finish();
    }
    points.push_back(std::move(point));
  }
  return points;
}

std::optional<double> GapToBound(const StrategyRow& row, const std::optional<double>& bound) {
  if (!row.fits() || !bound || row.result->cost <= 0) return std::nullopt;
  return std::max(0.0, row.result->cost - *bound) / row.result->cost;
}

std::string RowStatus(const StrategyRow& row) {
  if (!row.result) return "no_schedule";
  return row.result->status == FitStatus::kFits ? "fits" : "over_budget";
}

nlohmann::json StrategyRowJson(const StrategyRow& row, double no_remat_cost,
                               const std::optional<double>& bound) {
  nlohmann::json j = {{"strategy", row.strategy},
                      {"status", RowStatus(row)},
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
  return j;
}

nlohmann::json SolverSettingsJson(const SolverSettings& settings) {
  return {{"time_limit_s", settings.time_limit_s}, {"threads", settings.threads},
          {"relative_gap", settings.relative_gap}, {"seed", settings.seed},
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
