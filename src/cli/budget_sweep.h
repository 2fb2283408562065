// Running strategies over a range of activation budgets: the shared core of `remat sweep`
// and `remat approx-report`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/progress.h"
#include "solvers/strategy_runner.h"
#include "core/graph.h"

namespace remat {

struct BudgetRangeArgs {
  std::string from_text;  // default: the graph's minimum-peak lower bound
  std::string to_text;    // default: the no-remat peak
  int32_t points = 10;
};

// Adds --points, --from and --to.
void AddBudgetRangeOptions(CLI::App& command, BudgetRangeArgs& args);

// `points` budgets from `from_bytes` to `to_bytes`, both included, evenly spaced and rounded
// down to whole bytes; equal budgets (a range narrower than the points) appear once.
std::vector<int64_t> BudgetGrid(int64_t from_bytes, int64_t to_bytes, int32_t points);

// The grid for `args` on `graph`; percentages are of `no_remat_peak_bytes`. UsageError when
// the range is empty (from above to) or a size is malformed.
std::vector<int64_t> ResolveBudgetGrid(const BudgetRangeArgs& args, const Graph& graph,
                                       int64_t no_remat_peak_bytes);

// Adds --time-limit, --threads, --gap, --seed, --eps, --rounds and --verbose (the settings of
// RunStrategy; defaults as in `settings`).
void AddSolverSettingOptions(CLI::App& command, SolverSettings& settings);

// Everything measured at one budget.
struct SweepPoint {
  int64_t budget_bytes = 0;
  std::optional<double> lower_bound;  // the best valid bound (absence-gap or LP), when found
  std::string lower_bound_status;     // SolveStatusName, or "skipped"
  double lower_bound_seconds = 0;
  std::vector<StrategyRow> rows;      // one per strategy, in the order asked
};

// For each budget: the best lower bound (unless `lower_bound` is false), then every strategy.
// `progress` counts one item per bound and per strategy run. With `total_time_limit_s` > 0 no
// run gets more than what is left of it, and once it is spent the remaining rows are
// "skipped" (solver status) without a schedule.
std::vector<SweepPoint> RunBudgetSweep(const Graph& graph, const std::vector<int64_t>& budgets,
                                       const std::vector<std::string>& strategies,
                                       const SolverSettings& settings, bool lower_bound,
                                       ProgressLine& progress, double total_time_limit_s = 0);

// Items RunBudgetSweep reports to its progress line.
int64_t SweepWorkItems(size_t budgets, size_t strategies, bool lower_bound);

// (cost - bound) / cost of a fitting schedule, clamped at 0; nullopt without both.
std::optional<double> GapToBound(const StrategyRow& row, const std::optional<double>& bound);

// A strategy's row as JSON: status fits | over_budget | no_schedule, cost, overhead (cost /
// `no_remat_cost`), peak_bytes, gap_to_lower_bound, solver status, solve_time_s, choice.
nlohmann::json StrategyRowJson(const StrategyRow& row, double no_remat_cost,
                               const std::optional<double>& bound);

// "fits", "over_budget" or "no_schedule".
std::string RowStatus(const StrategyRow& row);

// The solver settings as recorded in JSON output (STYLE.md: determinism).
nlohmann::json SolverSettingsJson(const SolverSettings& settings);

// Graph identity as recorded in JSON output.
nlohmann::json GraphSummaryJson(const Graph& graph);

// A number for a CSV cell or a gnuplot data column: "%.10g", or `missing` when absent.
std::string NumberOrMissing(const std::optional<double>& value, const std::string& missing);

}  // namespace remat
