// A solver-neutral sparse (mixed-integer) linear program: columns with bounds, objective
// coefficients and integrality; rows as lower <= sum(coefficient * column) <= upper.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace remat {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

struct Column {
  double lower = 0;
  double upper = 1;
  double objective = 0;
  bool integer = false;
  int32_t priority = 0;  // branching priority; smaller branches first (CBC convention), 0 = none
};

struct Term {
  int32_t column;
  double coefficient;
};

struct Row {
  double lower = -kInfinity;
  double upper = kInfinity;
  std::vector<Term> terms;
};

class LinearModel {
 public:
  int32_t AddColumn(const Column& column) {
    columns_.push_back(column);
    return static_cast<int32_t>(columns_.size() - 1);
  }
  void AddRow(double lower, std::vector<Term> terms, double upper) {
    rows_.push_back({lower, upper, std::move(terms)});
  }

  const std::vector<Column>& columns() const { return columns_; }
  std::vector<Column>& columns() { return columns_; }
  const std::vector<Row>& rows() const { return rows_; }
  int32_t num_columns() const { return static_cast<int32_t>(columns_.size()); }
  int32_t num_rows() const { return static_cast<int32_t>(rows_.size()); }
  int64_t num_nonzeros() const;
  int32_t num_integer_columns() const;

  // Objective value and the largest row or bound violation of an assignment.
  double Objective(const std::vector<double>& values) const;
  double MaxViolation(const std::vector<double>& values) const;

 private:
  std::vector<Column> columns_;
  std::vector<Row> rows_;
};

}  // namespace remat
