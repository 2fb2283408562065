// The planner's error classes in Python: remat.Error and its subclasses, one per C++ error.
#pragma once

#include <pybind11/pybind11.h>

namespace remat {

// Registers Error (the base of every error the planner raises), InputError, UsageError (also
// raised for std::invalid_argument, e.g. a malformed size) and InternalError on `m`. Must run
// before any other Bind*: the others' functions raise these.
void BindErrors(pybind11::module_& m);

}  // namespace remat
