// Correlations and relative errors of model costs against measured costs.
#include "exec/cost_comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/errors.h"

namespace remat {
namespace {

double Pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const auto n = static_cast<double>(x.size());
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n;
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0;
}

// Ranks 1..n; tied values share the mean of their ranks.
std::vector<double> Ranks(const std::vector<double>& v) {
  std::vector<size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double mean_rank = (static_cast<double>(i + j) / 2) + 1;
    for (size_t k = i; k <= j; ++k) rank[order[k]] = mean_rank;
    i = j + 1;
  }
  return rank;
}

}  // namespace

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

CostComparison CompareCosts(const std::vector<double>& model_costs,
                            const std::vector<double>& measured, int32_t worst_count) {
  if (model_costs.size() != measured.size() || model_costs.empty()) {
    throw InputError(fmt::format("cannot compare {} model costs with {} measured costs",
                                 model_costs.size(), measured.size()));
  }
  for (size_t i = 0; i < measured.size(); ++i) {
    if (!(model_costs[i] >= 0) || !(measured[i] >= 0)) {
      throw InputError(fmt::format("node {}: costs must be >= 0 (model {}, measured {})", i,
                                   model_costs[i], measured[i]));
    }
  }
  const double model_total = std::accumulate(model_costs.begin(), model_costs.end(), 0.0);
  const double measured_total = std::accumulate(measured.begin(), measured.end(), 0.0);
  if (model_total <= 0 || measured_total <= 0) {
    throw InputError("cannot compare costs that are all zero");
  }
  CostComparison c{.nodes = static_cast<int32_t>(measured.size()),
                   .rate = measured_total / model_total,
                   .pearson = Pearson(model_costs, measured),
                   .spearman = Pearson(Ranks(model_costs), Ranks(measured))};
  std::vector<double> relative;
  int32_t within = 0;
  double zero_cost_measured = 0;
  std::vector<NodeCostError> errors;
  for (size_t i = 0; i < measured.size(); ++i) {
    const double predicted = c.rate * model_costs[i];
    errors.push_back({.id = static_cast<int32_t>(i), .predicted = predicted,
                      .measured = measured[i]});
    if (model_costs[i] == 0) {
      ++c.zero_cost_nodes;
      zero_cost_measured += measured[i];
    }
    if (measured[i] > 0) {
      relative.push_back(std::abs(predicted - measured[i]) / measured[i]);
      const double ratio = predicted / measured[i];
      if (ratio >= 0.5 && ratio <= 2.0) ++within;
    }
  }
  c.median_relative_error = Median(relative);
  c.within_factor_2 = relative.empty() ? 0 : within / static_cast<double>(relative.size());
  c.zero_cost_measured_share = zero_cost_measured / measured_total;
  std::stable_sort(errors.begin(), errors.end(), [](const auto& a, const auto& b) {
    return std::abs(a.predicted - a.measured) > std::abs(b.predicted - b.measured);
  });
  errors.resize(std::min(errors.size(), static_cast<size_t>(std::max(worst_count, 0))));
  c.worst = std::move(errors);
  return c;
}

}  // namespace remat
