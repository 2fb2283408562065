// The computation graph in Python: NodeKind, Node and Graph.
#pragma once

#include <pybind11/pybind11.h>

namespace remat {

// Registers NodeKind, Node and Graph on `m`; every node id that Python passes is checked.
void BindGraph(pybind11::module_& m);

}  // namespace remat
