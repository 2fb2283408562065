// Conversion of a LinearModel to COIN-OR's column-major arrays (solvers' COIN files only).
#pragma once

#include <vector>

#include <CoinPackedMatrix.hpp>

#include "solvers/linear_model.h"

namespace remat {

struct CoinArrays {
  CoinPackedMatrix matrix;
  std::vector<double> column_lower, column_upper, objective, row_lower, row_upper;
};

CoinArrays ToCoin(const LinearModel& model);

}  // namespace remat
