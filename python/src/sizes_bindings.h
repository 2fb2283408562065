// Memory sizes in Python: parsing '16GiB' or '60%' and formatting byte counts.
#pragma once

#include <pybind11/pybind11.h>

namespace remat {

// Registers resolve_size and format_bytes on `m`.
void BindSizes(pybind11::module_& m);

}  // namespace remat
