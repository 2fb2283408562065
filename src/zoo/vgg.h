// VGG16 and VGG19 (keras.applications), and the VGG blocks the segmentation encoders reuse.
#pragma once

#include <cstdint>
#include <vector>

#include "model/network_builder.h"
#include "zoo/networks.h"

namespace remat {

// VGG16 / VGG19: depth is 16 or 19.
NetworkBuilder BuildVgg(int depth, const ImageConfig& config);
// Adds VGG blocks 1..blocks ('same' 3x3 convolutions with fused ReLU, 2x2 max-pooling) on the
// network input; returns the block pools (f1, f2, ...).
std::vector<NetworkBuilder::Tensor> AddVggBlocks(NetworkBuilder& net, int depth, int blocks);

}  // namespace remat
