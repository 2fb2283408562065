// Ctrl-C for long C++ calls (interruptible.h).
#include "interruptible.h"

#include <pybind11/pybind11.h>

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

void RunInterruptibly(const std::function<void()>& work) {
  std::atomic<bool> cancel{false};
  std::exception_ptr failure;
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  // The worker forks CBC's child process, which dies when the forking thread ends
  // (cbc_mip.cc); the worker ends only after it has waited for that child.
  std::thread worker([&] {
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
        if (PyErr_CheckSignals() != 0) interrupted.emplace();  // takes the raised exception
      }
      if (interrupted) cancel = true;
      lock.lock();
    }
  }
  worker.join();
  if (interrupted) throw std::move(*interrupted);
  if (failure) std::rethrow_exception(failure);
}

}  // namespace remat
