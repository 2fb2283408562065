// How well one set of node costs (analytic FLOPs) predicts another (measured milliseconds):
// the report `remat-run profile` prints, so users know whether FLOP-based plans can be trusted
// on their hardware or a measured profile (`remat --costs`) is worth it.
#pragma once

#include <cstdint>
#include <vector>


namespace remat {

struct NodeCostError {
  int32_t id = 0;
  double predicted = 0;  // the model's cost scaled by the fitted rate, in measured units
  double measured = 0;
};

struct CostComparison {
  int32_t nodes = 0;
  // Measured units per model unit: total measured / total model cost (so the step's total is
  // predicted exactly and the node errors show the spread).
  double rate = 0;
  double pearson = 0;   // linear correlation of model and measured costs over all nodes
  double spearman = 0;  // rank correlation (ties share their mean rank)
  // |predicted - measured| / measured over nodes with a measured cost > 0.
  double median_relative_error = 0;
  double within_factor_2 = 0;  // fraction of those nodes with predicted/measured in [1/2, 2]
  // Nodes whose model cost is 0 (reshapes, flatten, ...) and their share of the measured time.
  int32_t zero_cost_nodes = 0;
  double zero_cost_measured_share = 0;
  std::vector<NodeCostError> worst;  // the largest absolute errors, largest first
};

// The middle value, or the mean of the two middle ones; 0 for none.
double Median(std::vector<double> values);

// Compares `model_costs[i]` with `measured[i]` (same length, all >= 0, some of each > 0;
// InputError otherwise). `worst_count` bounds `worst`.
CostComparison CompareCosts(const std::vector<double>& model_costs,
                            const std::vector<double>& measured, int32_t worst_count = 5);

}  // namespace remat
