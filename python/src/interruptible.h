// Ctrl-C for long C++ calls: the planner never returns to the interpreter while it works, so
// Python's signal handlers would run only when it finishes (at its time limit, for a solve).
#pragma once

#include <functional>

namespace remat {

// Runs `work` on a worker thread with the GIL released while the calling thread (which must
// hold the GIL) runs Python's signal handlers every 50 ms. When one raises (KeyboardInterrupt
// on Ctrl-C), the work is cancelled (core/cancellation.h: it stops as at its time limit and its
// CBC child is killed), joined, and the handler's exception is thrown; otherwise `work`'s own
// exception, if any, is. `work` must take the GIL itself before touching Python objects.
void RunInterruptibly(const std::function<void()>& work);

}  // namespace remat
