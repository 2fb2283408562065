// The max-batch search: probes of one strategy at growing batches, then a binary search.
#include "planning/max_batch.h"

#include <algorithm>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "core/cancellation.h"
#include "core/sizes.h"
#include "solvers/lower_bound.h"
#include "strategies/registry.h"

namespace remat {

const char* BatchOutcomeName(BatchOutcome outcome) {
  switch (outcome) {
    case BatchOutcome::kFeasible: return "feasible";
    case BatchOutcome::kInfeasible: return "infeasible";
    case BatchOutcome::kUndecided: return "undecided";
  }
  return "?";
}

std::optional<double> MaxBatchReport::Ratio(const StrategySearch& search) const {
  if (reference_batch <= 0) return std::nullopt;
  return static_cast<double>(search.max_batch) / static_cast<double>(reference_batch);
}

bool MaxBatchReport::any() const {
  return std::any_of(results.begin(), results.end(),
                     [](const StrategySearch& s) { return s.max_batch > 0; });
}

MaxBatchSearch::MaxBatchSearch(BatchGraphBuilder build, MaxBatchRequest request)
    : build_(std::move(build)), request_(std::move(request)), total_(request_.total_time_limit_s) {
  settings_ = request_.settings;
  settings_.progress = false;
}

double MaxBatchSearch::TotalLeft() const {
  return CancelRequested() ? 0 : total_.Left();  // a cancelled search probes nothing more
}

BatchCase& MaxBatchSearch::Case(int64_t batch) {
  auto found = cases_.find(batch);
  if (found != cases_.end()) return *found->second;
  auto c = std::make_unique<BatchCase>();
  c->batch = batch;
  c->built = std::make_unique<BatchGraph>(build_(batch));
  const Graph& graph = c->built->graph;
  c->budget_bytes = request_.memory_bytes - c->built->fixed_bytes;
  c->min_peak_bytes = MinimumPeakLowerBound(graph);
  c->total_cost = graph.total_cost();
  double forward_cost = 0;
  for (const Node& node : graph.nodes()) {
    if (node.kind == NodeKind::kForward) forward_cost += node.cost;
  }
  // The paper's cap: one extra forward pass on top of the no-remat step.
  c->cost_cap = request_.max_overhead > 0 ? request_.max_overhead * c->total_cost
                                          : c->total_cost + forward_cost;
  return *cases_.emplace(batch, std::move(c)).first->second;
}

BatchProbe MaxBatchSearch::Run(const std::string& strategy, int64_t batch) {
  BatchCase& c = Case(batch);
  BatchProbe probe{.batch = batch, .budget_bytes = c.budget_bytes,
                   .fixed_bytes = c.built->fixed_bytes};
  if (c.budget_bytes <= 0) {
    probe.reason = fmt::format("the fixed memory {} fills the device", FormatBytes(probe.fixed_bytes));
    probe.no_schedule_can_fit = true;
    return probe;
  }
  if (c.budget_bytes < c.min_peak_bytes) {
    probe.no_schedule_can_fit = true;
    const auto [budget_text, minimum_text] = FormatBytesApart(c.budget_bytes, c.min_peak_bytes);
    probe.reason =
        fmt::format("budget {} is below the minimum peak {}", budget_text, minimum_text);
    return probe;
  }
  SolverSettings settings = settings_;  // a probe never outlives the total limit
  settings.time_limit_s = std::max(0.5, std::min(settings.time_limit_s, TotalLeft()));
  settings.decide_at_cost = c.cost_cap * (1 + 1e-12);
  const StrategyRow row = RunStrategy(strategy, c.built->graph, c.budget_bytes, settings);
  probe.seconds = row.seconds;
  probe.solver_status = row.solver_status;
  if (row.result) {
    probe.cost = row.result->cost;
    probe.overhead = row.result->cost / c.total_cost;
    probe.peak_bytes = row.result->peak_bytes;
  }
  // A tiny tolerance: costs are sums of doubles and the cap is one.
  const double cap = c.cost_cap * (1 + 1e-12);
  if (row.fits() && row.result->cost <= cap) {
    probe.outcome = BatchOutcome::kFeasible;
    return probe;
  }
  if (row.fits()) {
    probe.reason = fmt::format("overhead {:.3f}x above the cap {:.3f}x", *probe.overhead,
                               c.cost_cap / c.total_cost);
  } else if (row.result) {
    const auto [peak_text, budget_text] = FormatBytesApart(row.result->peak_bytes, c.budget_bytes);
    probe.reason = fmt::format("peak {} over the budget {}", peak_text, budget_text);
  } else {
    probe.reason = "no schedule (" + SolveStatusPhrase(row.solver_status) + ")";
  }
  // A heuristic's failure is its own verdict; optimal's needs a proof.
  if (strategy == "optimal") CertifyOptimal(row, c, cap, probe);
  return probe;
}

void MaxBatchSearch::CertifyOptimal(const StrategyRow& row, BatchCase& c, double cap,
                                    BatchProbe& probe) {
  // Optimal: infeasible only with a proof that no schedule within the cap exists.
  if (row.solver_status == "infeasible") {
    probe.reason = "proven infeasible";
    return;
  }
  if (row.own_bound && *row.own_bound > cap) {
    probe.reason += fmt::format("; proven: lower bound {:.3f}x", *row.own_bound / c.total_cost);
    return;
  }
  const BestBound best = BestLowerBound(
      c.built->graph, c.budget_bytes,
      {.time_limit_s = std::max(0.5, std::min(settings_.time_limit_s, TotalLeft())),
       .threads = settings_.threads});
  if (best.status == SolveStatus::kInfeasible) {
    probe.reason += fmt::format("; proven: {} shows no schedule fits", best.source);
    return;
  }
  if (best.cost > cap) {
    probe.reason += fmt::format("; proven: {} bound {:.3f}x", best.source, best.cost / c.total_cost);
    return;
  }
  probe.outcome = BatchOutcome::kUndecided;
  probe.reason = fmt::format("undecided: solver {} at the time limit, {}, and no proof that "
                             "none fits",
                             row.solver_status, probe.reason);
}
// Exponential then binary search for the largest feasible batch, starting above
// `known_feasible` (a batch already known to have a schedule, or 0). For optimal, whose
// feasibility is monotone in the batch, doubling stops at the first failure. A heuristic
// can fail at one batch and succeed at a larger one (a rounding of a different LP), so its
// doubling goes on until no schedule of any strategy can fit (the budget is below the
// minimum peak, or the weights fill the device) and the binary search then runs above the
// largest power of two that worked.
StrategySearch MaxBatchSearch::Search(const std::string& strategy, int64_t known_feasible,
                                    const WorkProgress& progress, const std::string& position) {
  StrategySearch search;
  search.strategy = strategy;
  search.seeded_from = known_feasible;
  const auto start = std::chrono::steady_clock::now();
  std::map<int64_t, BatchProbe> by_batch;
  auto probe = [&](int64_t batch) {
    progress.Start(fmt::format("{} at batch {} ({})", strategy, batch, position));
    BatchProbe p = Run(strategy, batch);
    progress.Finish();
    search.probes.push_back(p);
    by_batch[batch] = p;
    return p.outcome == BatchOutcome::kFeasible;
  };
  int64_t lo = std::min(known_feasible, request_.max_batch);
  int64_t hi = 0;  // smallest batch found not feasible; 0: none yet
  int64_t batch = lo > 0 ? std::min(2 * lo, request_.max_batch) : 1;
  if (lo == request_.max_batch) {
    search.limit_reached = true;
  } else {
    const bool monotone = strategy == "optimal";
    while (true) {
      if (TotalLeft() <= 0) {
        search.stopped_at_total_limit = true;
        break;
      }
      if (probe(batch)) {
        lo = batch;
        hi = 0;
      } else if (hi == 0 || batch < hi) {
        hi = batch;
      }
      if (hi > 0 && (monotone || by_batch.at(batch).no_schedule_can_fit)) break;
      if (batch == request_.max_batch) {
        search.limit_reached = hi == 0;
        break;
      }
      batch = std::min(2 * batch, request_.max_batch);
    }
    // The smallest failure above the largest success bounds the binary search.
    if (hi > 0) {
      for (const auto& [b, p] : by_batch) {
        if (b > lo && p.outcome != BatchOutcome::kFeasible) {
          hi = b;
          break;
        }
      }
    }
    while (hi - lo > 1) {
      if (TotalLeft() <= 0) {
        search.stopped_at_total_limit = true;
        break;
      }
      const int64_t mid = lo + (hi - lo) / 2;
      if (probe(mid)) lo = mid;
      else hi = mid;
    }
  }
  search.max_batch = lo;
  if (lo > 0) {
    auto found = by_batch.find(lo);
    search.at_max = found != by_batch.end() ? found->second : Run(strategy, lo);
  }
  if (hi > 0) {
    search.next = by_batch.at(hi);
    search.exact = search.next->outcome == BatchOutcome::kInfeasible;
  }
  // Stopped early, batches between max_batch and the next probe were never tried.
  if (search.stopped_at_total_limit) search.exact = false;
  for (const auto& [b, p] : by_batch) {
    if (b > lo && p.outcome == BatchOutcome::kUndecided) search.uncertified = p;
    if (b > lo && p.outcome == BatchOutcome::kInfeasible && !search.smallest_infeasible) {
      search.smallest_infeasible = b;
    }
  }
  search.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return search;
}

MaxBatchReport MaxBatchSearch::SearchAll(const std::vector<std::string>& strategies,
                                         const WorkProgress& progress) {
  MaxBatchReport report;
  const BatchCase& one = Reference();
  report.cap_ratio = one.cost_cap / one.total_cost;
  report.results.resize(strategies.size());
  std::optional<StrategySearch> reference;
  int64_t best_baseline = 0;
  auto position = [&](size_t i) { return fmt::format("strategy {}/{}", i + 1, strategies.size()); };
  for (size_t i = 0; i < strategies.size(); ++i) {
    if (FindBaseline(strategies[i]) == nullptr) continue;
    report.results[i] = Search(strategies[i], 0, progress, position(i));
    best_baseline = std::max(best_baseline, report.results[i].max_batch);
    if (strategies[i] == kMaxBatchReference) reference = report.results[i];
  }
  if (!reference) {
    reference = Search(kMaxBatchReference, 0, progress, "reference");
    best_baseline = std::max(best_baseline, reference->max_batch);
  }
  for (size_t i = 0; i < strategies.size(); ++i) {
    if (FindBaseline(strategies[i]) != nullptr) continue;
    // The MILP starts from the cheapest fitting baseline, so optimal is feasible wherever a
    // baseline is; approx rounds an LP and has no such guarantee.
    const int64_t seed = strategies[i] == "optimal" ? best_baseline : 0;
    report.results[i] = Search(strategies[i], seed, progress, position(i));
  }
  report.reference_batch = reference->max_batch;
  return report;
}

}  // namespace remat
