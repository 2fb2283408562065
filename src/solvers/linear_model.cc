// Bookkeeping of the solver-neutral linear model.
#include "solvers/linear_model.h"

#include <algorithm>
#include <cmath>

namespace remat {

int64_t LinearModel::num_nonzeros() const {
  int64_t count = 0;
  for (const Row& row : rows_) count += static_cast<int64_t>(row.terms.size());
  return count;
}

int32_t LinearModel::num_integer_columns() const {
  return static_cast<int32_t>(
      std::count_if(columns_.begin(), columns_.end(), [](const Column& c) { return c.integer; }));
}

double LinearModel::Objective(const std::vector<double>& values) const {
  double total = 0;
  for (size_t c = 0; c < columns_.size(); ++c) total += columns_[c].objective * values[c];
  return total;
}

double LinearModel::MaxViolation(const std::vector<double>& values) const {
  double worst = 0;
  for (size_t c = 0; c < columns_.size(); ++c) {
    worst = std::max({worst, columns_[c].lower - values[c], values[c] - columns_[c].upper});
    if (columns_[c].integer) worst = std::max(worst, std::fabs(values[c] - std::round(values[c])));
  }
  for (const Row& row : rows_) {
    double activity = 0;
    for (const Term& term : row.terms) activity += term.coefficient * values[term.column];
    worst = std::max({worst, row.lower - activity, activity - row.upper});
  }
  return worst;
}

}  // namespace remat
