// Memory sizes in Python, with the command line's units and rules (docs/cli.md).
#include "sizes_bindings.h"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/errors.h"
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
  m.def(
      "_check_size",
      [](const std::string& text, const std::string& option, bool percent_allowed) {
        const SizeSpec spec = [&] {
          try {
            return ParseSize(text);
          } catch (const std::invalid_argument& error) {
            throw UsageError(option + ": " + error.what());
          }
        }();
        if (spec.percent && !percent_allowed) {
          throw UsageError(option + " takes a size (16GiB, 16e9), not a percentage");
        }
      },
      py::arg("text"), py::arg("option"), py::arg("percent_allowed"),
      "UsageError naming `option` when `text` is not a size the command line accepts (or is a "
      "percentage where none is allowed); checked before any work starts.");
  m.def("format_bytes", &FormatBytes, py::arg("bytes"));
}

}  // namespace remat
