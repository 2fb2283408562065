// Ctrl-C for long C++ calls (interruptible.h).
#include "interruptible.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include "core/cancellation.h"

namespace py = pybind11;

namespace remat {
namespace {

// Set by remat's SIGINT handler (Python) while it plans, cleared when a planning starts and
// ends; read without the GIL by the watcher below.
std::atomic<bool> interrupt_requested{false};

// Python's id of the interpreter's main thread (threading.main_thread()), read when the module
// is imported.
unsigned long main_thread_id = 0;  // NOLINT(runtime/int): the type of Python's thread ids

bool OnMainThread() { return PyThread_get_thread_ident() == main_thread_id; }

// The KeyboardInterrupt of a set flag, as the error a raising signal handler leaves.
py::error_already_set FlaggedInterrupt() {
  PyErr_SetNone(PyExc_KeyboardInterrupt);
  return py::error_already_set();
}

}  // namespace

void RunInterruptibly(const std::function<void()>& work) {
  // Only the main thread's calls are remat's planning that Ctrl-C stops (Python runs signal
  // handlers there alone); another thread's call runs to its end.
  const bool flagged = OnMainThread();
  if (flagged && interrupt_requested) throw FlaggedInterrupt();
  std::atomic<bool> cancel{false};
  std::exception_ptr failure;
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  std::atomic<unsigned long> worker_id{0};  // NOLINT(runtime/int): Python's thread id type
  // The worker forks CBC's child process, which dies when the forking thread ends
  // (cbc_mip.cc); the worker ends only after it has waited for that child.
  std::thread worker([&] {
    worker_id = PyThread_get_thread_ident();
    {
      const CancellationScope scope(cancel);
      try {
        work();
      } catch (...) {
        failure = std::current_exception();
      }
    }
    const std::lock_guard<std::mutex> lock(mutex);
    done = true;
    finished.notify_one();
  });
  std::optional<py::error_already_set> interrupted;
  {
    const py::gil_scoped_release release;
    std::unique_lock<std::mutex> lock(mutex);
    while (!finished.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) {
      if (interrupted) continue;  // cancelled: wait for the worker to stop
      lock.unlock();
      {
        const py::gil_scoped_acquire acquire;
        // Runs the handlers of signals that arrived; only the main thread does, elsewhere
        // this returns 0 and the call runs to its end.
        if (PyErr_CheckSignals() != 0) {
          interrupted.emplace();  // takes the raised exception
        } else if (flagged && interrupt_requested) {
          interrupted.emplace(FlaggedInterrupt());
        }
        // Python code that the work calls back (max_batch's build_graph, which may capture a
        // model for seconds) stops at its next bytecode instead of running to its end; a
        // worker that runs none is not affected.
        if (interrupted) PyThreadState_SetAsyncExc(worker_id, PyExc_KeyboardInterrupt);
      }
      if (interrupted) cancel = true;
      lock.lock();
    }
  }
  worker.join();
  if (interrupted) throw std::move(*interrupted);
  // A flag set after the last look (work that ended within a tick of Ctrl-C) is the same
  // interrupt: planning stops here, not at the caller's next look.
  if (flagged && interrupt_requested) throw FlaggedInterrupt();
  if (failure) std::rethrow_exception(failure);
}

void BindInterrupt(py::module_& m) {
  main_thread_id = py::module_::import("threading")
                       .attr("main_thread")()
                       .attr("ident")
                       .cast<unsigned long>();  // NOLINT(runtime/int)
  m.def(
      "_interrupt_requested", [] { return interrupt_requested.load(); },
      "True once remat's SIGINT handler recorded Ctrl-C in the planning under way "
      "(remat/interrupt.py).");
  m.def(
      "_set_interrupt_requested", [](bool requested) { interrupt_requested = requested; },
      py::arg("requested"), "Sets or clears the interrupt flag (remat/interrupt.py).");
}

}  // namespace remat
