// A schedule simulated against a budget: what every strategy and solver returns, and how two
// such results are ranked.
#pragma once

#include <cstdint>
#include <string>

#include "core/graph.h"
#include "core/schedule.h"

namespace remat {

enum class FitStatus { kFits, kOverBudget };

const char* FitStatusName(FitStatus status);

struct StrategyResult {
  std::string strategy;
  FitStatus status = FitStatus::kOverBudget;
  double cost = 0;          // simulated, in the graph's cost unit
  int64_t peak_bytes = 0;   // simulated
  Schedule schedule;
  std::string parameters;   // the choice the strategy made, e.g. "checkpoints: 1 3 5 7"
};

// Simulates `schedule` (which must pass CheckSchedule; InternalError otherwise) and fills a
// result whose status compares the simulated peak with `budget_bytes`.
StrategyResult EvaluateSchedule(const Graph& graph, std::string strategy, Schedule schedule,
                                int64_t budget_bytes, std::string parameters);

// Orders candidate results: a fitting one beats an over-budget one; among fitting ones the
// cheaper wins, then the smaller peak; among over-budget ones the smaller peak wins.
bool IsBetter(const StrategyResult& a, const StrategyResult& b);

}  // namespace remat
