// What a built network is beyond its layers' shapes: its forward graph, its input, its
// parameter totals and FLOPs, whatever built it (the zoo's networks, a test's own).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/training_graph.h"
#include "model/network_builder.h"

namespace remat {

// What a built model is, beyond its graph.
struct ModelInfo {
  std::string model;  // its name: the registry name of a zoo model
  int64_t batch = 0;
  Shape input_shape;                 // batch first: (B, H, W, 3) or (B, S)
  Shape output_shape;                // of the last layer
  int64_t parameters = 0;            // all weights (the published totals count these)
  int64_t trainable_parameters = 0;  // those with gradients and optimizer state
  int64_t input_bytes = 0;           // the input batch: float32 pixels or int32 token ids
  double forward_flops = 0;          // sum of the layers' analytic FLOPs (any cost model)
  std::vector<Layer> layers;         // forward node i is layers[i]
};

struct BuiltModel {
  ForwardGraph forward;  // named e.g. "vgg16 (batch 256, 224x224x3)"
  ModelInfo info;
};

// `net` described under the name `model`: its batch, input and output shapes, the input's bytes
// (kElementBytes per element), the sums of its layers' parameters, trainable parameters and
// FLOPs, and the layers themselves. `net` has at least one layer.
ModelInfo DescribeNetwork(const NetworkBuilder& net, std::string model);

}  // namespace remat
