// MobileNet v1, width 1.0 (keras.applications).
#pragma once

#include <cstdint>
#include <vector>

#include "model/network_builder.h"
#include "zoo/networks.h"

namespace remat {

NetworkBuilder BuildMobileNetV1(const ImageConfig& config);

}  // namespace remat
