// Ctrl-C for long C++ calls: the planner never returns to the interpreter while it works, so
// Python's signal handlers would run only when it finishes (at its time limit, for a solve).
#pragma once

#include <pybind11/pybind11.h>

#include <functional>

namespace remat {

// Runs `work` on a worker thread with the GIL released while the calling thread (which must
// hold the GIL) runs Python's signal handlers every 50 ms. When one raises (KeyboardInterrupt
// on Ctrl-C), the work is cancelled (core/cancellation.h: it stops as at its time limit and its
// CBC child is killed), joined, and the handler's exception is thrown; otherwise `work`'s own
// exception, if any, is. On the main thread the interrupt flag (below) counts as such a
// handler's KeyboardInterrupt: set before the call, the work does not start; set while it
// runs or by the time it ends, KeyboardInterrupt is thrown. `work` must take the GIL itself
// before touching Python objects.
void RunInterruptibly(const std::function<void()>& work);

// Registers _interrupt_requested() and _set_interrupt_requested(bool): the process's flag that
// remat's SIGINT handler sets while remat plans on the main thread (python/remat/interrupt.py),
// so that an interrupt Python swallowed (raised inside a weakref callback) still stops the
// planning.
void BindInterrupt(pybind11::module_& m);

}  // namespace remat
