// The Python module remat._core: the planner's graphs, schedules, simulator, strategies, bounds,
// sizes, schedule files and the planning layer, one Bind* per part (each in the file named for it). The Python
// package (python/remat) wraps it; errors cross as remat.InputError, remat.UsageError and
// remat.InternalError, never as a crash.
#include <pybind11/pybind11.h>

#include "errors_bindings.h"
#include "graph_bindings.h"
#include "interruptible.h"
#include "planning_bindings.h"
#include "schedule_bindings.h"
#include "sizes_bindings.h"
#include "solver_bindings.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "remat's C++ planner: graphs, schedules, simulator, strategies and solvers";
  // Errors first, then each type before the functions whose signatures name it.
  remat::BindErrors(m);
  remat::BindGraph(m);
  remat::BindSchedule(m);
  remat::BindSimulation(m);
  remat::BindSizes(m);
  remat::BindStrategies(m);
  remat::BindBounds(m);
  remat::BindScheduleFiles(m);
  remat::BindPlanning(m);
  remat::BindInterrupt(m);
}
