// Solver-neutral options and outcomes of an LP or MILP solve.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace remat {

enum class SolveStatus {
  kOptimal,               // proven within the requested relative gap
  kFeasible,              // a solution, not proven optimal (time limit or gap)
  kInfeasible,            // proven: no solution exists
  kTimeLimitNoSolution,   // stopped before finding any solution
  kNoSolution,            // a heuristic (LP rounding) found none; no proof that none exists
  kError,                 // the solver failed; never reported as infeasible
};

const char* SolveStatusName(SolveStatus status);
// The solver status of a row whose solver stopped at a gap target looser than kProvenGap: its
// cost is within that target of the bound, not proven optimal (plan_report.h).
inline constexpr const char* kWithinGapStatus = "within_gap";
// The same for people: "no solution within the time limit" for kTimeLimitNoSolution.
const char* SolveStatusPhrase(SolveStatus status);
// SolveStatusPhrase of the status named `name` (SolveStatusName), or `name` itself.
std::string SolveStatusPhrase(const std::string& name);

// The gap of a schedule's `cost` to a proven lower `bound` on every schedule's cost:
// (cost - bound) / cost, clamped at 0 (a bound above the cost only means the bound is tight
// up to rounding). NaN when `cost` is not positive, where no relative gap is defined. This is
// the one gap formula of remat: solvers, plans, sweeps, the CLI and Python all report it.
double RelativeGap(double cost, double bound);

// The one test of "proven within the gap target": cost - bound <= relative_gap * max(1, |cost|)
// (the max keeps costs near 0 from demanding an exact bound). Solvers stop on it; tables call
// such a row optimal.
bool WithinGap(double cost, double bound, double relative_gap);

// The largest cost that WithinGap accepts against `bound` when costs are at least 1:
// bound / (1 - relative_gap); +infinity when relative_gap >= 1.
double GapTargetCost(double bound, double relative_gap);

// The smallest bound that proves `cost` within the gap target (WithinGap).
double BoundNeededFor(double cost, double relative_gap);

// The default gap target of every front end: 0.1%, the way MIP solvers' ratio gap is used.
inline constexpr double kDefaultRelativeGap = 1e-3;

// The gap within which a cost is called optimal, whatever the gap target: a cost within 1e-4
// of a valid bound, as MIP solvers call a solution optimal. A solver stopped at a looser target
// says "within" that target instead (docs/design.md §8, "Proof words").
inline constexpr double kProvenGap = 1e-4;

struct SolverProgress {
  double elapsed_s = 0;
  double incumbent = std::numeric_limits<double>::infinity();  // model objective units
  double bound = -std::numeric_limits<double>::infinity();
  int64_t nodes = 0;
};

struct MipOptions {
  double time_limit_s = 60;    // elapsed (wall-clock) seconds
  // When positive, CBC's process is stopped at this many seconds whatever its own limit (which
  // it checks only in some phases), keeping its last incumbent; by default at
  // 1.1 x time_limit_s + 3 (cbc_mip.cc).
  double hard_deadline_s = 0;
  int32_t threads = 1;
  double relative_gap = kDefaultRelativeGap;  // stop when (incumbent - bound) / |incumbent| is below this
  int32_t seed = 1;
  bool verbose = false;        // solver log to stderr
  // Stop as soon as an incumbent's objective is at most this: a bound known from elsewhere
  // already proves such a solution optimal, so CBC need not prove it again.
  double stop_at_objective = -std::numeric_limits<double>::infinity();
  // Stop as soon as the proven bound is at least this: the caller needs no tighter bound (say
  // the absence-gap bound once it proves a known schedule within the gap target).
  double stop_at_bound = std::numeric_limits<double>::infinity();
  // When positive, stop once this many seconds pass without a new incumbent and without the
  // gap narrowing by a tenth: a search that has stopped paying for its time.
  double patience_s = 0;
  std::function<void(const SolverProgress&)> progress;  // called about once a second
};

struct LpOptions {
  double time_limit_s = 3600;
  bool verbose = false;
};

struct SolverOutput {
  SolveStatus status = SolveStatus::kError;
  std::vector<double> values;  // one per column when a solution exists
  double objective = std::numeric_limits<double>::quiet_NaN();
  double bound = -std::numeric_limits<double>::infinity();
  double seconds = 0;
  int64_t nodes = 0;
  std::string message;         // solver's own words on errors and limits, and why it stopped
};

}  // namespace remat
