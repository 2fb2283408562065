// Scoring a schedule: simulate it, compare its peak with the budget, rank the results.
#include "core/evaluated_schedule.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.h"
#include "core/simulator.h"

namespace remat {

const char* FitStatusName(FitStatus status) {
  return status == FitStatus::kFits ? "fits" : "over budget";
}

StrategyResult EvaluateSchedule(const Graph& graph, std::string strategy, Schedule schedule,
                                int64_t budget_bytes, std::string parameters) {
  const std::vector<std::string> problems = CheckSchedule(graph, schedule, 3);
  if (!problems.empty()) {
    throw InternalError(fmt::format("{} produced an invalid schedule: {}", strategy,
                                    fmt::join(problems, "; ")));
  }
  const SimulationResult sim = Simulate(graph, schedule);
  StrategyResult result;
  result.strategy = std::move(strategy);
  result.cost = sim.cost;
  result.peak_bytes = sim.peak_bytes;
  result.status = sim.peak_bytes <= budget_bytes ? FitStatus::kFits : FitStatus::kOverBudget;
  result.schedule = std::move(schedule);
  result.parameters = std::move(parameters);
  return result;
}

bool IsBetter(const StrategyResult& a, const StrategyResult& b) {
  const bool a_fits = a.status == FitStatus::kFits;
  const bool b_fits = b.status == FitStatus::kFits;
  if (a_fits != b_fits) return a_fits;
  if (a_fits && a.cost != b.cost) return a.cost < b.cost;
  if (a.peak_bytes != b.peak_bytes) return a.peak_bytes < b.peak_bytes;
  return a.cost < b.cost;
}

}  // namespace remat
