// Dispatch from strategy names to baselines and solvers, with progress for long solves.
#include "planning/strategy_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/cancellation.h"
#include "core/errors.h"
#include "planning/verdict.h"
#include "strategies/best_heuristic.h"
#include "strategies/eviction.h"
#include "strategies/registry.h"

namespace remat {
namespace {

// Heuristics that work on any DAG, then the solvers.
const std::vector<std::string> kHeuristicNames = {"evict", "local-search"};
const std::vector<std::string> kSolverNames = {"approx", "approx-randomized", "optimal"};

std::string SizeNote(const OptimizerResult& r) {
  return fmt::format("model {} cols ({} int) x {} rows; paper form {} x {}", r.size.columns,
                     r.size.integer_columns, r.size.rows, r.full_size.columns, r.full_size.rows);
}

StrategyRow FromOptimizer(const OptimizerResult& r, double seconds) {
  StrategyRow row;
  row.strategy = r.strategy;
  row.result = r.schedule;
  row.solver_status = SolveStatusName(r.status);
  row.seconds = seconds;
  row.stop_reason = r.stop_reason;
  std::vector<std::string> notes;
  if (!r.message.empty()) notes.push_back(r.message);
  if (!r.start.empty()) notes.push_back("start: " + r.start);
  notes.push_back(SizeNote(r));
  row.note = fmt::format("{}", fmt::join(notes, "; "));
  return row;
}

// Optimal's answer is never costlier than the best schedule found before it (its start, unless
// the whole MILP ran without one and stopped at its time limit with a worse incumbent).
void KeepTheBetterStart(const StrategyResult& best, StrategyRow& row) {
  if (best.status != FitStatus::kFits) return;
  if (row.fits() && row.result->cost <= best.cost) return;
  const std::string own = row.result ? fmt::format("cost {:.6g}", row.result->cost) : "none";
  row.result = best;
  row.result->parameters = fmt::format("from {} ({})", best.strategy, best.parameters);
  row.result->strategy = "optimal";
  row.solver_status = SolveStatusName(SolveStatus::kFeasible);
  row.stop_reason = fmt::format("{}; kept {}'s schedule", row.stop_reason, best.strategy);
  row.note = fmt::format("kept {}'s schedule, cheaper than the solver's own ({}); {}",
                         best.strategy, own, row.note);
}

StrategyRow RunOne(const std::string& name, const Graph& graph, int64_t budget_bytes,
                   const SolverSettings& settings, SharedWork* shared);

}  // namespace

void CheckThreads(int32_t threads, const std::string& option) {
  if (threads < 1 || threads > kMaxThreads) {
    throw UsageError(fmt::format("{} must be between 1 and {}, got {}", option, kMaxThreads,
                                 threads));
  }
}

std::vector<size_t> RunOrder(const std::vector<std::string>& names) {
  std::vector<size_t> order;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != "optimal") order.push_back(i);
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "optimal") order.push_back(i);
  }
  return order;
}

std::vector<std::string> StrategyNames() {
  std::vector<std::string> names;
  for (const StrategySpec& spec : BaselineStrategies()) names.push_back(spec.name);
  names.insert(names.end(), kHeuristicNames.begin(), kHeuristicNames.end());
  names.insert(names.end(), kSolverNames.begin(), kSolverNames.end());
  return names;
}

bool StrategyApplies(const std::string& name, const Graph& graph) {
  const StrategySpec* spec = FindBaseline(name);
  return spec == nullptr || spec->applies(graph);
}

StrategyRow RunStrategy(const std::string& name, const Graph& graph, int64_t budget_bytes,
                        const SolverSettings& settings, SharedWork* shared) {
  const auto start = std::chrono::steady_clock::now();
  StrategyRow row;
  try {
    // Every strategy keeps its limit through the one mechanism of core/cancellation.h: its
    // loops stop at this deadline with what they have, and a schedule still being built or
    // simulated then is abandoned.
    const DeadlineScope deadline(settings.time_limit_s);
    row = RunOne(name, graph, budget_bytes, settings, shared);
  } catch (const TimeLimitReached&) {
    row = StrategyRow{
        .strategy = name,
        .solver_status = SolveStatusName(SolveStatus::kTimeLimitNoSolution),
        .seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
        .note = CancelRequested() ? "cancelled"
                                  : fmt::format("the time limit ({:.3g} s) came before it had "
                                                "a schedule",
                                                settings.time_limit_s)};
  }
  if (shared != nullptr) {
    // Optimal out of time before a schedule of its own answers with its start.
    if (name == "optimal" && shared->best) KeepTheBetterStart(*shared->best, row);
    if (row.result && (!shared->best || IsBetter(*row.result, *shared->best))) {
      shared->best = row.result;
    }
  }
  // Against its own bound until a report knows a better one (plan_report.cc settles again).
  SettleSolverStatus(row, row.own_bound, settings.relative_gap);
  return row;
}

namespace {

StrategyRow RunOne(const std::string& name, const Graph& graph, int64_t budget_bytes,
                   const SolverSettings& settings, SharedWork* shared) {
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if (const StrategySpec* spec = FindBaseline(name)) {
    StrategyRow row;
    row.strategy = name;
    row.result = spec->run(graph, budget_bytes);
    row.seconds = seconds();
    return row;
  }
  if (name == "evict" || name == "local-search") {
    StrategyRow row;
    row.strategy = name;
    if (name == "evict") {
      row.result = Evict(graph, budget_bytes, {.time_limit_s = settings.time_limit_s});
      if (shared != nullptr) shared->evicted = row.result;
    } else {
      row.result = BestHeuristic(
          graph, budget_bytes,
          {.time_limit_s = settings.time_limit_s,
           .evicted = shared != nullptr ? shared->evicted : std::nullopt,
           .known = shared != nullptr ? shared->known : std::nullopt});
      if (shared != nullptr) shared->heuristic = row.result;
    }
    row.seconds = seconds();
    return row;
  }
  const LpOptions lp{.time_limit_s = settings.time_limit_s, .verbose = settings.verbose};
  if (name == "approx" || name == "approx-randomized") {
    const bool reused = shared != nullptr && shared->relaxation != nullptr &&
                        shared->relaxation->budget_bytes == budget_bytes &&
                        shared->relaxation->eps == settings.eps;
    std::shared_ptr<const Relaxation> relaxation =
        reused ? shared->relaxation : SolveRelaxation(graph, budget_bytes, settings.eps, lp);
    if (shared != nullptr) shared->relaxation = relaxation;
    const OptimizerResult r =
        name == "approx"
            ? SolveApproxDeterministic(graph, budget_bytes,
                                       {.eps = settings.eps, .lp = lp, .relaxation = relaxation})
            : SolveApproxRandomized(graph, budget_bytes,
                                    {.eps = settings.eps, .rounds = settings.rounds,
                                     .seed = static_cast<uint32_t>(settings.seed), .lp = lp,
                                     .relaxation = relaxation});
    StrategyRow row = FromOptimizer(r, seconds());
    if (reused) row.note = "LP shared with the other rounding; " + row.note;
    return row;
  }
  if (name == "optimal") {
    MipOptions mip{.time_limit_s = settings.time_limit_s,
                   .threads = settings.threads,
                   .relative_gap = settings.relative_gap,
                   .seed = settings.seed,
                   .verbose = settings.verbose};
    OptimalOptions optimal{.mip = mip, .mip_start = settings.mip_start,
                           .decide_at_cost = settings.decide_at_cost,
                           .patience_s = settings.patience_s,
                           .time_before_s = settings.time_before_s};
    // Whether a line was drawn in this process (the MILP's come from CBC's child process and
    // only after its first second).
    auto drawn = std::make_shared<bool>(false);
    if (settings.progress) {
      // Graph cost units and overhead, as in the final table.
      double total = 0;
      for (const Node& node : graph.nodes()) total += node.cost;
      optimal.progress = [total, drawn](const OptimalProgress& p) {
        *drawn = true;
        const bool has = std::isfinite(p.cost);
        const double gap = has && p.cost > 0 ? 100.0 * RelativeGap(p.cost, p.bound) : 100.0;
        // One short line (within 120 columns): a sentence of what runs, then the numbers.
        fmt::print(stderr, "\r[optimal] {:.1f} s, {}: {}; best cost {} ({}), gap {:.1f}%\x1b[K",
                   p.elapsed_s, p.phase, p.detail, has ? fmt::format("{:.6g}", p.cost) : "none",
                   has && total > 0 ? fmt::format("{:.3f}x", p.cost / total) : "-", gap);
        std::fflush(stderr);
      };
    }
    if (shared != nullptr) {
      optimal.heuristic = shared->heuristic;
      optimal.known_lower_bound = shared->lower_bound;
      optimal.candidate_start = shared->best;
      // A rounding of this command already offered its schedule through shared->best.
      optimal.rounding_start = shared->relaxation == nullptr;
    }
    const OptimizerResult r = SolveOptimal(graph, budget_bytes, optimal);
    if (settings.progress && (*drawn || seconds() >= 1.0)) fmt::print(stderr, "\n");
    StrategyRow row = FromOptimizer(r, seconds());
    if (r.status == SolveStatus::kOptimal || r.status == SolveStatus::kFeasible) {
      row.own_bound = r.lower_bound;
    }
    return row;
  }
  throw UsageError(fmt::format("unknown strategy '{}'; choose from: all, {}", name,
                               fmt::join(StrategyNames(), ", ")));
}

}  // namespace

std::vector<std::string> ParseStrategyList(const std::string& list, const Graph& graph) {
  std::vector<std::string> names;
  if (list == "all") {
    for (const std::string& name : StrategyNames()) {
      if (StrategyApplies(name, graph)) names.push_back(name);
    }
    return names;
  }
  std::stringstream stream(list);
  std::string name;
  const std::vector<std::string> known = StrategyNames();
  while (std::getline(stream, name, ',')) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw UsageError(fmt::format("unknown strategy '{}'; choose from: all, {}", name,
                                   fmt::join(known, ", ")));
    }
    names.push_back(name);
  }
  if (names.empty()) throw UsageError("--strategy lists no strategy");
  return names;
}

}  // namespace remat
