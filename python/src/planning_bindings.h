// The planning layer in Python: plan at a budget, sweep budgets, search the largest batch, the
// gap formula, and zoo models to plan.
#pragma once

#include <pybind11/pybind11.h>

namespace remat {

// Adds _plan, _sweep, _max_batch, relative_gap, zoo_model and their result classes to `m`.
void BindPlanning(pybind11::module_& m);

}  // namespace remat
