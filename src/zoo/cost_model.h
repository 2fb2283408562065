// From a built network to a forward graph: node costs by the analytic FLOP model or by a
// roofline time model of a device (docs/zoo.md), node bytes from the float32 output shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/training_graph.h"
#include "zoo/devices.h"
#include "zoo/layers.h"

namespace remat {

enum class CostModel {
  kFlops,     // cost = the layer's analytic FLOPs (DESIGN §1); unit "flop"
  kRoofline,  // cost = max(flops / peak, bytes moved / bandwidth) in milliseconds; unit "ms"
};

const char* CostModelName(CostModel model);  // "flops" | "roofline"
std::optional<CostModel> ParseCostModel(const std::string& name);
const char* CostUnit(CostModel model);  // "flop" | "ms"

// Bytes a layer moves through memory: its inputs, its output and the weights it reads.
int64_t LayerBytesMoved(const NetworkBuilder& net, int32_t layer);

// max(flops / peak FLOP/s, bytes / bandwidth), in milliseconds.
double RooflineMs(double flops, int64_t bytes_moved, const DeviceSpec& device);

// One forward node per layer (same order, same names, the layer's backward_reads_inputs),
// one edge per distinct (input layer, layer) pair; the loss holds one float per sample and
// costs 0. `device` is required by
// kRoofline (InputError otherwise) and ignored by kFlops.
ForwardGraph ToForwardGraph(const NetworkBuilder& net, std::string graph_name, CostModel model,
                            const DeviceSpec* device);

}  // namespace remat
