// libFuzzer entry point: any bytes are imported as an ONNX model. The importer must either
// return a forward graph that makes a valid training graph or throw InputError; anything else
// (a crash, a sanitizer report, another exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/errors.h"
#include "core/training_graph.h"
#include "onnx/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace remat;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // The last byte's low bits pick the options, so both batch paths and both unknown-operator
  // modes are exercised (the byte stays part of the model: protobuf tolerates it or rejects).
  const uint8_t selector = size > 0 ? data[size - 1] : 0;
  OnnxImportOptions options;
  if (selector & 1) options.batch = 1 + (selector >> 4);
  if (selector & 2) options.unknown_ops = UnknownOps::kZeroCost;
  ImportedOnnxModel model;
  try {
    model = ImportOnnxBytes(bytes, "fuzz.onnx", options);
  } catch (const InputError&) {
    return 0;  // rejected with a message: the expected outcome for nearly every input
  }
  // An accepted model must give a valid training graph: a throw here is an importer bug.
  const Graph graph = BuildTrainingGraph(model.forward);
  if (graph.size() != 2 * static_cast<int32_t>(model.forward.nodes.size()) + 1) __builtin_trap();
  return 0;
}
