// Schedules in Python: the R and S matrices, their check and operation list, the simulator,
// and schedule files.
#pragma once

#include <pybind11/pybind11.h>

namespace remat {

// Registers Schedule (a hand-made one is checked on construction), check_schedule and
// build_plan on `m`. Needs BindGraph first.
void BindSchedule(pybind11::module_& m);

// Registers SimulationResult and simulate on `m`.
void BindSimulation(pybind11::module_& m);

// Registers ScheduleDocument, load_schedule and save_schedule on `m`.
void BindScheduleFiles(pybind11::module_& m);

}  // namespace remat
