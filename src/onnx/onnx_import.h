// Imports an ONNX model as a forward graph (docs/design.md §1): one forward node per ONNX operator that
// computes an activation, bytes from inferred shapes and element types, FLOPs by the zoo's
// analytic model. Constant and shape computations are folded away, identity-like operators
// alias their input, initializers and constants are parameters (fixed memory). docs/onnx.md
// gives every rule. Only the sources of src/onnx include ONNX or protobuf headers; this one does
// not.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/training_graph.h"
#include "model/cost_model.h"
#include "model/devices.h"
#include "model/fixed_memory.h"

namespace remat {

// What to do with an operator remat has no cost rule for.
enum class UnknownOps {
  kError,     // InputError naming the operator type and the node (the default)
  kZeroCost,  // a node of cost 0; its output shape is inferred, or else its first input's
};

const char* UnknownOpsName(UnknownOps mode);  // "error" | "zero-cost"
std::optional<UnknownOps> ParseUnknownOps(const std::string& name);

struct OnnxImportOptions {
  // The batch to build the graph at. A symbolic batch dimension is set to it; a fixed one is
  // rescaled: every activation's and input's size (and FLOPs) is multiplied by batch / exported.
  // Empty: the file's fixed batch (a symbolic batch is then an InputError).
  std::optional<int64_t> batch;
  UnknownOps unknown_ops = UnknownOps::kError;
  CostModel cost_model = CostModel::kFlops;
  std::optional<DeviceSpec> device;  // required by CostModel::kRoofline
  // kPortable: the importer's own estimates (docs/onnx.md, "Workspace"); kNone: every node's
  // workspace is 0. The importer knows no backend's kernels, so kLibtorchCpu counts as
  // kPortable (the command line refuses it).
  WorkspaceModel workspace = WorkspaceModel::kPortable;
};

struct ImportedOnnxModel {
  ForwardGraph forward;               // named "<file stem> (onnx, batch N)"
  std::vector<std::string> op_types;  // of forward node i ("Conv", "com.microsoft.Gelu", ...)
  std::vector<double> flops;          // analytic forward FLOPs of node i, whatever the cost model
  int64_t batch = 0;                  // the batch the graph is built at
  std::optional<int64_t> exported_batch;  // the file's fixed batch; empty when symbolic

  // Fixed memory (docs/design.md §2). Parameters are initializers and Constant outputs, sized by their
  // element types; trainable ones are the floating-point initializers other than batch-norm
  // running statistics. Inputs are the graph inputs without initializers, at `batch`.
  int64_t parameters = 0;  // elements
  int64_t trainable_parameters = 0;
  int64_t parameter_bytes = 0;
  int64_t trainable_parameter_bytes = 0;
  int64_t input_bytes = 0;

  // What became of the file's nodes: forward nodes + folded + aliases + unused = onnx nodes.
  int32_t onnx_nodes = 0;
  int32_t folded_nodes = 0;  // Constant and computations on constants and shapes only
  int32_t alias_nodes = 0;   // Identity and eval-form Dropout: their output is their input
  int32_t unused_nodes = 0;  // activations the graph's first output does not depend on
  std::vector<std::string> zero_cost_nodes;  // unknown operators costed 0: "Op (node)"
  int64_t ir_version = 0;
  int64_t opset = 0;  // of the standard domain
  std::string producer;
};

// Reads, checks (onnx::checker), infers shapes (onnx::shape_inference) and converts. Every
// problem with the file is an InputError whose message starts with `path`: unreadable,
// truncated or not ONNX, invalid ONNX, symbolic sizes other than the batch, an unsupported
// operator (with its type and node name), a tensor whose shape cannot be inferred. Weights'
// values are never read: initializers may be stripped or external.
ImportedOnnxModel ImportOnnxFile(const std::string& path, const OnnxImportOptions& options = {});
// The same on the bytes of a file; `source` names it in messages.
ImportedOnnxModel ImportOnnxBytes(std::string_view bytes, const std::string& source,
                                  const OnnxImportOptions& options = {});

// Parameters, their gradients and optimizer state (copies of the trainable bytes) and the
// input batch, by the rule of docs/design.md §2 with the model's own element sizes.
FixedMemory OnnxFixedMemory(const ImportedOnnxModel& model, Optimizer optimizer);

}  // namespace remat
