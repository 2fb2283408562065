// A row's verdict from its cost and the best bound, and the solver status that says the same.
#include "planning/verdict.h"

#include <fmt/format.h>

#include "solvers/solver_types.h"

namespace remat {

RowVerdict VerdictOf(const StrategyRow& row, const std::optional<double>& bound,
                     double relative_gap) {
  if (!row.result) return RowVerdict::kNoSchedule;
  if (!row.fits()) return RowVerdict::kOverBudget;
  if (!bound) return RowVerdict::kFeasible;
  const double cost = row.result->cost;
  if (WithinGap(cost, *bound, kProvenGap)) return RowVerdict::kOptimal;
  if (row.strategy == "optimal" && WithinGap(cost, *bound, relative_gap)) {
    return RowVerdict::kWithinGap;
  }
  return RowVerdict::kFeasible;
}

const char* RowVerdictName(RowVerdict verdict) {
  switch (verdict) {
    case RowVerdict::kOptimal: return "optimal";
    case RowVerdict::kWithinGap: return "within gap";
    case RowVerdict::kFeasible: return "feasible";
    case RowVerdict::kOverBudget: return "over budget";
    case RowVerdict::kNoSchedule: return "no schedule";
  }
  return "?";
}

std::string RowVerdictText(RowVerdict verdict, double relative_gap) {
  if (verdict != RowVerdict::kWithinGap) return RowVerdictName(verdict);
  return fmt::format("within {:.3g}%", 100 * relative_gap);
}

void SettleSolverStatus(StrategyRow& row, const std::optional<double>& bound,
                        double relative_gap) {
  const std::string optimal = SolveStatusName(SolveStatus::kOptimal);
  const std::string feasible = SolveStatusName(SolveStatus::kFeasible);
  if (!row.fits()) return;
  if (row.solver_status != optimal && row.solver_status != feasible &&
      row.solver_status != kWithinGapStatus) {
    return;
  }
  switch (VerdictOf(row, bound, relative_gap)) {
    case RowVerdict::kOptimal: row.solver_status = optimal; break;
    case RowVerdict::kWithinGap: row.solver_status = kWithinGapStatus; break;
    default: row.solver_status = feasible; break;
  }
}

void SettleSolverStatus(std::vector<StrategyRow>& rows, const std::optional<double>& bound,
                        double relative_gap) {
  for (StrategyRow& row : rows) SettleSolverStatus(row, bound, relative_gap);
}

}  // namespace remat
