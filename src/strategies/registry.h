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
  // Whether the graph has what the strategy needs (a forward pass, module structure); run
  // throws InputError on a graph where it does not apply.
  std::function<bool(const Graph&)> applies;
  std::function<StrategyResult(const Graph&, int64_t budget_bytes)> run;
};

// In display order: checkpoint-all first, then Chen's and Griewank's methods, then the
// checkpointing read from module structure (checkpoint-blocks, selective).
const std::vector<StrategySpec>& BaselineStrategies();
// nullptr when no baseline has that name.
const StrategySpec* FindBaseline(const std::string& name);

}  // namespace remat
