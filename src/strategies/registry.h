// The baseline strategies by name, as the command line and comparisons list them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/evaluated_schedule.h"
#include "core/graph.h"

namespace remat {

struct StrategySpec {
  std::string name;
  std::string description;
  bool needs_training_structure = true;
  std::function<StrategyResult(const Graph&, int64_t budget_bytes)> run;
};

// In display order: checkpoint-all first, then Chen's and Griewank's methods.
const std::vector<StrategySpec>& BaselineStrategies();
// nullptr when no baseline has that name.
const StrategySpec* FindBaseline(const std::string& name);

}  // namespace remat
