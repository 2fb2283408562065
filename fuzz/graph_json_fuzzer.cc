// libFuzzer entry point: any bytes are read as a graph in remat's JSON format (GraphFromJson).
// The reader must either return a valid graph or throw InputError; anything else (a crash, a
// sanitizer report, another exception) is a bug. Accepted graphs must round-trip unchanged.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/errors.h"
#include "core/graph_json.h"
#include "graph_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace remat;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::optional<Graph> graph;
  try {
    graph.emplace(GraphFromJson(text, "fuzz.json"));
  } catch (const InputError&) {
    return 0;  // rejected with a message: the expected outcome for nearly every input
  }
  fuzz::CheckAcceptedGraph(*graph);
  return 0;
}
