// The planner's error classes in Python: each C++ error crosses as its own class, never as a
// crash or a bare RuntimeError.
#include "errors_bindings.h"

#include <exception>
#include <stdexcept>

#include "core/errors.h"

namespace py = pybind11;

namespace remat {

void BindErrors(py::module_& m) {
  // Later registrations are tried first, so the base class goes first.
  auto& error = py::register_exception<std::runtime_error>(m, "Error", PyExc_RuntimeError);
  auto& input = py::register_exception<InputError>(m, "InputError", error.ptr());
  py::register_exception<InfeasibleBudgetError>(m, "InfeasibleBudgetError", input.ptr());
  auto& usage = py::register_exception<UsageError>(m, "UsageError", error.ptr());
  py::register_exception<InternalError>(m, "InternalError", error.ptr());
  static PyObject* usage_error = usage.ptr();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(usage_error, e.what());
    }
  });
}

}  // namespace remat
