// MobileNet v1 (width 1.0, depth multiplier 1) as keras.applications defines it.
#include <fmt/format.h>

#include "zoo/mobilenet.h"

namespace remat {
namespace {

using Tensor = NetworkBuilder::Tensor;

// keras mobilenet.py _depthwise_conv_block: a stride-2 block pads (0, 1) and convolves 'valid'.
Tensor DepthwiseSeparable(NetworkBuilder& net, Tensor x, int64_t filters, int64_t stride,
                          int block) {
  ConvOptions depthwise = {.stride = stride, .padding = Padding::kSame, .use_bias = false};
  if (stride != 1) {
    x = net.ZeroPad(fmt::format("conv_pad_{}", block), x, 0, 1, 0, 1);
    depthwise.padding = Padding::kValid;
  }
  x = net.DepthwiseConv2D(fmt::format("conv_dw_{}", block), x, 3, depthwise);
  x = net.BatchNorm(fmt::format("conv_dw_{}_bn", block), x);
  x = net.Activate(fmt::format("conv_dw_{}_relu", block), x, Activation::kRelu6);
  x = net.Conv2D(fmt::format("conv_pw_{}", block), x, filters, 1, {.use_bias = false});
  x = net.BatchNorm(fmt::format("conv_pw_{}_bn", block), x);
  return net.Activate(fmt::format("conv_pw_{}_relu", block), x, Activation::kRelu6);
}

}  // namespace

NetworkBuilder BuildMobileNetV1(const ImageConfig& config) {
  NetworkBuilder net("mobilenet", {config.batch, config.height, config.width, 3});
  Tensor x = net.ZeroPad("conv1_pad", NetworkBuilder::kInput, 0, 1, 0, 1);
  x = net.Conv2D("conv1", x, 32, 3, {.stride = 2, .padding = Padding::kValid, .use_bias = false});
  x = net.BatchNorm("conv1_bn", x);
  x = net.Activate("conv1_relu", x, Activation::kRelu6);
  struct Block {
    int64_t filters;
    int64_t stride;
  };
  const Block blocks[13] = {{64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},  {512, 2}, {512, 1},
                            {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}};
  for (int k = 0; k < 13; ++k) {
    x = DepthwiseSeparable(net, x, blocks[k].filters, blocks[k].stride, k + 1);
  }
  x = net.GlobalAvgPool("global_average_pooling2d", x);
  x = net.Reshape("reshape_1", x, {1, 1, 1024});
  x = net.Dropout("dropout", x, 1e-3);  // keras mobilenet.py's default rate
  x = net.Conv2D("conv_preds", x, config.classes, 1);
  x = net.Reshape("reshape_2", x, {config.classes});
  net.Activate("act_softmax", x, Activation::kSoftmax);
  return net;
}

}  // namespace remat
