// What the planning verbs (solve, sweep, approx-report, maxbatch) share on the command line:
// the budget-range and solver options, and the JSON of a strategy's row.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/graph.h"
#include "planning/budget_sweep.h"
#include "planning/plan_report.h"
#include "planning/strategy_runner.h"
#include "planning/time_left.h"

namespace remat {

// What is left of a command's whole time limit `total_s` (a sum of --time-limit per run, or
// --total-time-limit), counted from `command`'s start, for the command's DeadlineScope
// (core/cancellation.h): every strategy, bound and search it runs keeps that deadline.
// Infinity when `total_s` is not positive (no limit).
double CommandSecondsLeft(const TimeLeft& command, double total_s);

// Adds --points, --from and --to.
void AddBudgetRangeOptions(CLI::App& command, BudgetRange& range);

// Adds --time-limit, --threads, --gap, --seed, --eps, --rounds and --verbose (the settings of
// RunStrategy; defaults as in `settings`).
void AddSolverSettingOptions(CLI::App& command, SolverSettings& settings);

// A strategy's row as JSON: status fits | over_budget | no_schedule, verdict optimal |
// feasible | over_budget | no_schedule (what the tables' status column says: optimal only when
// the cost meets `bound` within `relative_gap`), cost, overhead (cost / `no_remat_cost`),
// peak_bytes, gap_to_lower_bound, solver status, solve_time_s, choice.
nlohmann::json StrategyRowJson(const StrategyRow& row, double no_remat_cost,
                               const std::optional<double>& bound, double relative_gap);

// "fits", "over_budget" or "no_schedule".
std::string RowStatus(const StrategyRow& row);

// The solver settings as recorded in JSON output (STYLE.md: determinism).
nlohmann::json SolverSettingsJson(const SolverSettings& settings);

// Graph identity as recorded in JSON output.
nlohmann::json GraphSummaryJson(const Graph& graph);

// A number for a CSV cell or a gnuplot data column: "%.10g", or `missing` when absent.
std::string NumberOrMissing(const std::optional<double>& value, const std::string& missing);

}  // namespace remat
