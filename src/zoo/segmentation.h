// keras_segmentation's vgg_unet, fcn_8_vgg and segnet (vanilla encoder).
#pragma once

#include <cstdint>
#include <vector>

#include "model/network_builder.h"
#include "zoo/networks.h"

namespace remat {

NetworkBuilder BuildVggUNet(const ImageConfig& config);
NetworkBuilder BuildFcn8Vgg(const ImageConfig& config);
NetworkBuilder BuildSegNet(const ImageConfig& config);

}  // namespace remat
