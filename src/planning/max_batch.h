// The largest batch whose training step fits a device, per strategy, within an overhead cap
// (the paper's max-batch experiment, figure 6): an exponential then binary search over the
// batch, with certificates for `optimal`. The model is rebuilt at each batch by a callback, so
// the CLI (zoo models) and Python (any builder) share the search.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.h"
#include "planning/strategy_runner.h"
#include "planning/time_left.h"
#include "planning/work_progress.h"

namespace remat {

// A model built at one batch: its training graph and the fixed memory that the device must
// also hold (parameters, gradients, optimizer state, the input batch).
struct BatchGraph {
  Graph graph;
  int64_t fixed_bytes = 0;
  int64_t input_bytes = 0;  // the part of fixed_bytes that is the input batch
};

// Builds the model at `batch` (>= 1). May throw InputError or UsageError.
using BatchGraphBuilder = std::function<BatchGraph(int64_t batch)>;

// The strategy whose max batch is the reference of every ratio.
inline constexpr const char* kMaxBatchReference = "checkpoint-all";

struct MaxBatchRequest {
  int64_t memory_bytes = 0;        // device memory
  SolverSettings settings{.time_limit_s = 60};
  double max_overhead = 0;         // cost cap as a multiple of the no-remat cost; 0: the
                                   // paper's cap, one extra forward pass
  int64_t max_batch = 65536;       // the search stops here
  double total_time_limit_s = 0;   // the whole search; 0: none
};

// The model at one batch size, with what the device leaves for activations.
struct BatchCase {
  int64_t batch = 0;
  std::unique_ptr<BatchGraph> built;
  int64_t budget_bytes = 0;  // device memory - fixed memory; <= 0 when the weights do not fit
  int64_t min_peak_bytes = 0;
  double total_cost = 0;     // the no-remat cost: every node once
  double cost_cap = 0;       // the largest cost that counts
};

enum class BatchOutcome {
  kFeasible,    // a simulated schedule fits the budget within the cost cap
  kInfeasible,  // none exists (optimal: proven), or the strategy finds none
  kUndecided,   // optimal only: the time limit stopped the solver before either
};

const char* BatchOutcomeName(BatchOutcome outcome);

struct BatchProbe {
  int64_t batch = 0;
  int64_t budget_bytes = 0;
  int64_t fixed_bytes = 0;
  BatchOutcome outcome = BatchOutcome::kInfeasible;
  bool no_schedule_can_fit = false;  // weights fill the device or budget < minimum peak
  std::string reason;
  std::string solver_status;
  std::optional<double> cost;  // of the schedule found, feasible or not
  std::optional<double> overhead;
  std::optional<int64_t> peak_bytes;
  double seconds = 0;
};

struct StrategySearch {
  std::string strategy;
  int64_t max_batch = 0;            // largest batch with a schedule found (0: none)
  bool limit_reached = false;       // feasible at max_batch of the request; stopped there
  bool exact = false;               // the next batch is infeasible (proven for optimal)
  std::optional<BatchProbe> at_max;      // the probe at max_batch
  std::optional<BatchProbe> next;        // the probe at max_batch + 1: why the search stopped
  std::optional<BatchProbe> uncertified; // the largest undecided batch probed above max_batch
  std::optional<int64_t> smallest_infeasible;  // the smallest batch probed that cannot fit
  int64_t seeded_from = 0;          // optimal: started above the best baseline's batch
  std::vector<BatchProbe> probes;   // in the order they ran
  double seconds = 0;
  bool stopped_at_total_limit = false;  // the total time limit ended the search early
  bool certified() const { return strategy == "optimal" && exact && !limit_reached; }
};

struct MaxBatchReport {
  std::vector<StrategySearch> results;  // one per strategy, in the order asked
  int64_t reference_batch = 0;          // checkpoint-all's max batch
  double cap_ratio = 0;                 // the cost cap over the no-remat cost, at batch 1
  // max_batch / reference_batch; nullopt when the reference fits no batch.
  std::optional<double> Ratio(const StrategySearch& search) const;
  bool any() const;                     // some strategy fits some batch
};

class MaxBatchSearch {
 public:
  MaxBatchSearch(BatchGraphBuilder build, MaxBatchRequest request);

  // The model at batch 1 (built once): its graph decides which strategies apply.
  const BatchCase& Reference() { return Case(1); }

  // Baselines first, then checkpoint-all as the reference (when not asked for), then the
  // solvers; `optimal` starts its search above the largest batch a baseline fits, since its
  // MILP starts from the cheapest fitting baseline.
  MaxBatchReport SearchAll(const std::vector<std::string>& strategies,
                           const WorkProgress& progress = {});

  // One strategy's search, starting above `known_feasible` (0: from batch 1).
  StrategySearch Search(const std::string& strategy, int64_t known_feasible,
                        const WorkProgress& progress, const std::string& position);

  // The verdict of `strategy` at one batch.
  BatchProbe Run(const std::string& strategy, int64_t batch);

 private:
  double TotalLeft() const;  // seconds left of the total limit (infinity without one)
  BatchCase& Case(int64_t batch);
  // Optimal only: after a failure, whether a bound proves that nothing fits under the cap.
  void CertifyOptimal(const StrategyRow& row, BatchCase& c, double cap, BatchProbe& probe);

  BatchGraphBuilder build_;
  MaxBatchRequest request_;
  SolverSettings settings_;
  TimeLeft total_;
  std::map<int64_t, std::unique_ptr<BatchCase>> cases_;
};

}  // namespace remat
