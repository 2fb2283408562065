// Memory sizes in Python, with the command line's units and rules (docs/cli.md).
#include "sizes_bindings.h"

#include <cstdint>
#include <string>

#include "core/sizes.h"
#include "planning/size_parsing.h"

namespace py = pybind11;

namespace remat {

void BindSizes(py::module_& m) {
  m.def(
      "resolve_size",
      [](const std::string& text, int64_t reference_bytes) {
        return ResolveSize(ParseSize(text), reference_bytes);
      },
      py::arg("text"), py::arg("reference_bytes"),
      "Bytes for '16GiB', '512MB', '1e9' or '60%' (of reference_bytes); UsageError if malformed.");
  m.def("format_bytes", &FormatBytes, py::arg("bytes"));
}

}  // namespace remat
