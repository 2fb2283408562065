// The proof words of a strategy's row (docs/design.md §8, "Proof words"): one rule for
// tables, JSON, schedule files, plots and Python.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "planning/strategy_runner.h"

namespace remat {

// What a row's status says. Optimal only when proven: its cost is within kProvenGap (1e-4) of
// the best bound, whatever the gap target. Within gap: optimal's row stopped at a looser gap
// target (`relative_gap`) and its cost meets the bound within it; a heuristic's row is never
// relabelled by the gap target. Feasible for any other schedule within the budget.
enum class RowVerdict { kOptimal, kWithinGap, kFeasible, kOverBudget, kNoSchedule };
RowVerdict VerdictOf(const StrategyRow& row, const std::optional<double>& bound,
                     double relative_gap);
// "optimal", "within gap", "feasible", "over budget", "no schedule".
const char* RowVerdictName(RowVerdict verdict);
// The verdict for people: RowVerdictName's, but "within 0.1%" (the gap target) for kWithinGap.
std::string RowVerdictText(RowVerdict verdict, double relative_gap);
// Brings each solver row's solver_status in line with its verdict against `bound`: "optimal"
// only when proven, kWithinGapStatus when it stopped at the gap target, else "feasible", so
// that tables, JSON, schedule files and Python say the same (heuristics' rows keep "").
void SettleSolverStatus(StrategyRow& row, const std::optional<double>& bound,
                        double relative_gap);
void SettleSolverStatus(std::vector<StrategyRow>& rows, const std::optional<double>& bound,
                        double relative_gap);

}  // namespace remat
