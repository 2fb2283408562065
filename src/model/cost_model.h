// From a built network to a forward graph: node costs by the analytic FLOP model or by a
// roofline time model of a device (docs/zoo.md), node bytes from the float32 output shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/training_graph.h"
#include "model/devices.h"
#include "model/kernel_work.h"
#include "model/network_builder.h"

namespace remat {

// A node's cost is the sum of the costs of the kernels it runs (kernel_work.h).
enum class CostModel {
  // cost = max(analytic FLOPs (docs/design.md §1), kFlopsPerElementMoved x elements moved): the
  // memory floor of a kernel, so copies, pooling and element-wise layers cost their traffic;
  // unit "flop"
  kFlops,
  kRoofline,  // cost = max(flops / peak, bytes moved / bandwidth) in milliseconds; unit "ms"
};

const char* CostModelName(CostModel model);  // "flops" | "roofline"
std::optional<CostModel> ParseCostModel(const std::string& name);
const char* CostUnit(CostModel model);  // "flop" | "ms"

// Bytes a layer moves through memory: its inputs, its output and the weights it reads.
int64_t LayerBytesMoved(const NetworkBuilder& net, int32_t layer);

// max(flops / peak FLOP/s, bytes / bandwidth), in milliseconds.
double RooflineMs(double flops, int64_t bytes_moved, const DeviceSpec& device);

// Under kFlops a kernel costs max(FLOPs, kFlopsPerElementMoved x elements moved): a roofline
// in FLOP units. 32 is a typical machine balance in this model's units (a multiply-accumulate
// is one FLOP): a V100 does 15.7e12 / 2 of them a second against 900e9 / 4 float moves, 35;
// an A100 25, an H100 40 (docs/zoo.md).
inline constexpr double kFlopsPerElementMoved = 32;

// One kernel's cost under `model` (`device` is read by kRoofline only).
double KernelCost(CostModel model, const KernelWork& work, const DeviceSpec* device);

// One forward node per layer (same order, same names, the layer's backward_reads_inputs),
// one edge per distinct (input layer, layer) pair. A forward node costs its forward kernel;
// its backward_cost is the sum over the kernels bwd(i) runs (BackwardKernels). The loss holds
// one float per sample and costs 0. `device` is required by kRoofline (InputError otherwise).
// `chosen` picks the workspace estimates; when empty the device does: WorkspaceModel::
// kPortable with a device (the presets are GPUs), kLibtorchCpu without one (remat-run's
// executor).
ForwardGraph ToForwardGraph(const NetworkBuilder& net, std::string graph_name, CostModel model,
                            const DeviceSpec* device,
                            std::optional<WorkspaceModel> chosen = std::nullopt);

}  // namespace remat
