// ResNet50 with bottleneck blocks (keras.applications).
#pragma once

#include <cstdint>
#include <vector>

#include "model/network_builder.h"
#include "zoo/networks.h"

namespace remat {

NetworkBuilder BuildResNet50(const ImageConfig& config);

}  // namespace remat
