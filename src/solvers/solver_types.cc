// Names of solver outcomes, as printed and written to JSON, and the gap to a bound.
#include "solvers/solver_types.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace remat {

const char* SolveStatusName(SolveStatus status) {
  switch (status) {
    case SolveStatus::kOptimal: return "optimal";
    case SolveStatus::kFeasible: return "feasible";
    case SolveStatus::kInfeasible: return "infeasible";
    case SolveStatus::kNoSolution: return "none_found";
    case SolveStatus::kTimeLimitNoSolution: return "time_limit_no_solution";
    case SolveStatus::kError: return "error";
  }
  return "?";
}

const char* SolveStatusPhrase(SolveStatus status) {
  switch (status) {
    case SolveStatus::kOptimal: return "proven optimal";
    case SolveStatus::kFeasible: return "feasible, not proven optimal";
    case SolveStatus::kInfeasible: return "proven infeasible";
    case SolveStatus::kNoSolution: return "none found";
    case SolveStatus::kTimeLimitNoSolution: return "none within the time limit";
    case SolveStatus::kError: return "solver error";
  }
  return "?";
}

namespace {
constexpr SolveStatus kStatuses[] = {
    SolveStatus::kOptimal, SolveStatus::kFeasible, SolveStatus::kInfeasible,
    SolveStatus::kTimeLimitNoSolution, SolveStatus::kNoSolution, SolveStatus::kError};
}  // namespace

std::string SolveStatusPhrase(const std::string& name) {
  if (name == kWithinGapStatus) return "within the gap target, not proven optimal";
  for (const SolveStatus status : kStatuses) {
    if (name == SolveStatusName(status)) return SolveStatusPhrase(status);
  }
  return name;
}

double RelativeGap(double cost, double bound) {
  if (!(cost > 0)) return std::nan("");
  return std::max(0.0, cost - bound) / cost;
}

bool WithinGap(double cost, double bound, double relative_gap) {
  return cost - bound <= relative_gap * std::max(1.0, std::fabs(cost));
}

double GapTargetCost(double bound, double relative_gap) {
  if (relative_gap >= 1) return std::numeric_limits<double>::infinity();
  return bound / (1 - relative_gap);
}

double BoundNeededFor(double cost, double relative_gap) {
  // A hair less than the gap allows, so that WithinGap accepts it despite rounding.
  return cost - relative_gap * std::max(1.0, std::fabs(cost)) * (1 - 1e-12);
}

}  // namespace remat
