// VGG16 and VGG19 as keras.applications defines them, and the VGG encoder the segmentation
// networks share.
#include <fmt/format.h>

#include "core/errors.h"
#include "zoo/vgg.h"

namespace remat {

std::vector<NetworkBuilder::Tensor> AddVggBlocks(NetworkBuilder& net, int depth, int blocks) {
  if (depth != 16 && depth != 19) throw InternalError(fmt::format("no VGG{}", depth));
  const int64_t filters[5] = {64, 128, 256, 512, 512};
  const int deep_convs = depth == 16 ? 3 : 4;  // convolutions in blocks 3-5
  std::vector<NetworkBuilder::Tensor> pools;
  NetworkBuilder::Tensor x = NetworkBuilder::kInput;
  for (int block = 1; block <= blocks; ++block) {
    const int convs = block <= 2 ? 2 : deep_convs;
    for (int conv = 1; conv <= convs; ++conv) {
      x = net.Conv2D(fmt::format("block{}_conv{}", block, conv), x, filters[block - 1], 3,
                     {.activation = Activation::kRelu});
    }
    x = net.MaxPool(fmt::format("block{}_pool", block), x, 2);
    pools.push_back(x);
  }
  return pools;
}

NetworkBuilder BuildVgg(int depth, const ImageConfig& config) {
  NetworkBuilder net(fmt::format("vgg{}", depth), {config.batch, config.height, config.width, 3});
  NetworkBuilder::Tensor x = AddVggBlocks(net, depth, 5).back();
  x = net.Flatten("flatten", x);
  x = net.Dense("fc1", x, 4096, {.activation = Activation::kRelu});
  x = net.Dense("fc2", x, 4096, {.activation = Activation::kRelu});
  net.Dense("predictions", x, config.classes, {.activation = Activation::kSoftmax});
  return net;
}

}  // namespace remat
