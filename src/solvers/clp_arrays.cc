// LinearModel to COIN-OR arrays.
#include "solvers/clp_arrays.h"

#include <CoinFinite.hpp>

namespace remat {
namespace {

double Coin(double value) {
  if (value == kInfinity) return COIN_DBL_MAX;
  if (value == -kInfinity) return -COIN_DBL_MAX;
  return value;
}

}  // namespace

CoinArrays ToCoin(const LinearModel& model) {
  CoinArrays arrays;
  const int32_t columns = model.num_columns();
  const int32_t rows = model.num_rows();
  std::vector<int> row_index;
  std::vector<int> column_index;
  std::vector<double> element;
  const auto nonzeros = static_cast<size_t>(model.num_nonzeros());
  row_index.reserve(nonzeros);
  column_index.reserve(nonzeros);
  element.reserve(nonzeros);
  for (int32_t r = 0; r < rows; ++r) {
    const Row& row = model.rows()[r];
    arrays.row_lower.push_back(Coin(row.lower));
    arrays.row_upper.push_back(Coin(row.upper));
    for (const Term& term : row.terms) {
      row_index.push_back(r);
      column_index.push_back(term.column);
      element.push_back(term.coefficient);
    }
  }
  for (const Column& column : model.columns()) {
    arrays.column_lower.push_back(Coin(column.lower));
    arrays.column_upper.push_back(Coin(column.upper));
    arrays.objective.push_back(column.objective);
  }
  arrays.matrix = CoinPackedMatrix(true, row_index.data(), column_index.data(), element.data(),
                                   static_cast<CoinBigIndex>(element.size()));
  // Trailing empty columns or rows are not implied by the triplets.
  arrays.matrix.setDimensions(rows, columns);
  return arrays;
}

}  // namespace remat
