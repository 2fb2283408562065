// Every strategy the command line offers (baselines and solvers) behind one call, so that
// solve, sweep and other verbs print the same rows.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/evaluated_schedule.h"
#include "core/graph.h"
#include "solvers/checkmate_solver.h"
#include "solvers/rounding.h"

namespace remat {

// The most CBC threads any front end accepts (the CLI's --threads and Python's threads=).
inline constexpr int32_t kMaxThreads = 256;
// UsageError naming `option` unless 1 <= threads <= kMaxThreads.
void CheckThreads(int32_t threads, const std::string& option = "threads");

struct SolverSettings {
  double time_limit_s = 60;
  int32_t threads = 1;  // 1..kMaxThreads
  double relative_gap = kDefaultRelativeGap;  // optimal's gap target
  double patience_s = 0;  // optimal: seconds without improvement before it ends (0: automatic)
  double time_before_s = 0;  // optimal: time its caller spent on its start and bound
  int32_t seed = 1;
  double eps = 0.1;
  int32_t rounds = 20;
  bool mip_start = true;  // seed CBC with the cheapest fitting baseline
  bool verbose = false;
  bool progress = false;  // progress line on stderr for solves longer than a second
  // optimal: stop once a schedule within this cost, or a bound above it, is found (maxbatch)
  std::optional<double> decide_at_cost;
};

struct StrategyRow {
  std::string strategy;
  std::optional<StrategyResult> result;  // simulated schedule, when one was found
  std::string solver_status;             // "" for baselines
  std::optional<double> own_bound;       // a solver's proven lower bound (optimal only)
  double seconds = 0;
  std::string note;                      // start, model size, failure reason
  std::string stop_reason;               // optimal: why it ended (OptimizerResult::stop_reason)
  bool fits() const { return result && result->status == FitStatus::kFits; }
};

// Baselines, then approx, approx-randomized and optimal.
std::vector<std::string> StrategyNames();
// False for a baseline that needs what the graph lacks: a training graph (forward/loss/backward
// labels) or module structure (checkpoint-blocks, selective). True for the other strategies.
bool StrategyApplies(const std::string& name, const Graph& graph);
// Work that strategies at one budget share, done by whichever runs first: the LP relaxation
// both roundings use, and the heuristics' schedules that later ones start from. Use one per
// (graph, budget, settings).
struct SharedWork {
  std::shared_ptr<const Relaxation> relaxation;
  std::optional<StrategyResult> evicted;     // evict's result, reused by local-search
  std::optional<StrategyResult> heuristic;   // local-search's result, reused by optimal
  std::optional<double> lower_bound;         // a valid bound (BestLowerBound), reused by optimal
  // The best schedule of every strategy run so far (IsBetter): optimal's start when it beats
  // local-search's, and the floor of optimal's answer.
  std::optional<StrategyResult> best;
  // The caller's best known schedule (PlanRequest::starts): local-search's start among the
  // baselines'.
  std::optional<StrategyResult> known;
};

// The order in which to run `names`: as asked, with optimal last, so that it starts from the
// best schedule any other strategy found (indices into `names`).
std::vector<size_t> RunOrder(const std::vector<std::string>& names);

// Throws UsageError naming the choices when `name` is unknown. `settings.time_limit_s` bounds
// the strategy's whole work. With `shared`, optimal never answers with a schedule costlier than
// shared->best: when its own is, it reports that one with solver status feasible.
StrategyRow RunStrategy(const std::string& name, const Graph& graph, int64_t budget_bytes,
                        const SolverSettings& settings, SharedWork* shared = nullptr);

// Parses "all" or a comma-separated list; "all" keeps only strategies that apply to the graph.
std::vector<std::string> ParseStrategyList(const std::string& list, const Graph& graph);

}  // namespace remat
