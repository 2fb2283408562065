// ONNX import (docs/onnx.md): its steps in order, each in its own file: reading and checking
// (model_reading), what each node becomes (node_roles), shapes (tensor_types, with the folding of
// shape computations) and the conversion into a forward graph (forward_conversion).
#include "onnx/onnx_import.h"

#include <fmt/format.h>

#include "core/file_io.h"
#include "onnx/forward_conversion.h"
#include "onnx/import_state.h"
#include "onnx/model_reading.h"
#include "onnx/node_roles.h"
#include "onnx/tensor_types.h"

namespace remat {

const char* UnknownOpsName(UnknownOps mode) {
  return mode == UnknownOps::kError ? "error" : "zero-cost";
}

std::optional<UnknownOps> ParseUnknownOps(const std::string& name) {
  if (name == "error") return UnknownOps::kError;
  if (name == "zero-cost") return UnknownOps::kZeroCost;
  return std::nullopt;
}

ImportedOnnxModel ImportOnnxBytes(std::string_view bytes, const std::string& source,
                                  const OnnxImportOptions& options) {
  onnx_import::ImportState state(source, options);
  if (options.batch && *options.batch <= 0) {
    state.Fail(fmt::format("the batch must be positive, not {}", *options.batch));
  }
  if (options.cost_model == CostModel::kRoofline && !options.device) {
    state.Fail("the roofline cost model needs a device (--device)");
  }
  onnx_import::ParseModel(state, bytes);
  onnx_import::CollectParameters(state);
  onnx_import::CheckModel(state);
  onnx_import::CheckSizeAttributes(state);
  onnx_import::FixBatch(state);
  onnx_import::ClassifyNodes(state);
  onnx_import::SelectForwardNodes(state);
  onnx_import::CheckOperators(state);
  onnx_import::InferShapes(state);
  return onnx_import::ConvertToForwardGraph(state);
}

ImportedOnnxModel ImportOnnxFile(const std::string& path, const OnnxImportOptions& options) {
  const std::string bytes = ReadFileText(path);
  return ImportOnnxBytes(bytes, path, options);
}

FixedMemory OnnxFixedMemory(const ImportedOnnxModel& model, Optimizer optimizer) {
  return {.parameter_bytes = model.parameter_bytes,
          .gradient_bytes = model.trainable_parameter_bytes,
          .optimizer_bytes = model.trainable_parameter_bytes * OptimizerStateCopies(optimizer),
          .input_bytes = model.input_bytes};
}

}  // namespace remat
