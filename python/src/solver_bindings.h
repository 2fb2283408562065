// Strategies and lower bounds in Python: run any strategy by name, bound any schedule's cost.
#pragma once

#include <pybind11/pybind11.h>

namespace remat {

// Registers strategy_names, strategy_applies, StrategyRow and run_strategy on `m`.
// Needs BindGraph and BindSchedule first.
void BindStrategies(pybind11::module_& m);

// Registers minimum_peak_lower_bound, LowerBound, lp_lower_bound, BestBound and
// best_lower_bound on `m`.
void BindBounds(pybind11::module_& m);

}  // namespace remat
