// ResNet50 as keras.applications defines it: bottleneck blocks with projection shortcuts,
// batch-norm, ReLU and add as their own layers.
#include <fmt/format.h>

#include <string>

#include "zoo/resnet.h"

namespace remat {
namespace {

using Tensor = NetworkBuilder::Tensor;

// keras resnet.py: every batch norm has epsilon 1.001e-5 (momentum Keras's 0.99).
constexpr double kBatchNormEpsilon = 1.001e-5;

Tensor BatchNorm(NetworkBuilder& net, const std::string& name, Tensor x) {
  return net.BatchNorm(name, x, kBatchNormEpsilon);
}

// keras resnet.py block1. Layers are created in the paper's order: the residual branch's first
// two convolutions, then the shortcut convolution, then the interleaved third conv and the
// two batch norms.
Tensor Bottleneck(NetworkBuilder& net, Tensor x, int64_t filters, int64_t stride,
                  bool conv_shortcut, const std::string& name) {
  Tensor y = net.Conv2D(name + "_1_conv", x, filters, 1, {.stride = stride});
  y = BatchNorm(net, name + "_1_bn", y);
  y = net.Activate(name + "_1_relu", y, Activation::kRelu);
  y = net.Conv2D(name + "_2_conv", y, filters, 3);
  y = BatchNorm(net, name + "_2_bn", y);
  y = net.Activate(name + "_2_relu", y, Activation::kRelu);
  Tensor shortcut = x;
  if (conv_shortcut) {
    shortcut = net.Conv2D(name + "_0_conv", x, 4 * filters, 1, {.stride = stride});
    y = net.Conv2D(name + "_3_conv", y, 4 * filters, 1);
    shortcut = BatchNorm(net, name + "_0_bn", shortcut);
  } else {
    y = net.Conv2D(name + "_3_conv", y, 4 * filters, 1);
  }
  y = BatchNorm(net, name + "_3_bn", y);
  y = net.Add(name + "_add", {shortcut, y});
  return net.Activate(name + "_out", y, Activation::kRelu);
}

Tensor Stack(NetworkBuilder& net, Tensor x, int64_t filters, int blocks, int64_t stride,
             const std::string& name) {
  x = Bottleneck(net, x, filters, stride, true, name + "_block1");
  for (int block = 2; block <= blocks; ++block) {
    x = Bottleneck(net, x, filters, 1, false, fmt::format("{}_block{}", name, block));
  }
  return x;
}

}  // namespace

NetworkBuilder BuildResNet50(const ImageConfig& config) {
  NetworkBuilder net("resnet50", {config.batch, config.height, config.width, 3});
  Tensor x = net.ZeroPad("conv1_pad", NetworkBuilder::kInput, 3, 3, 3, 3);
  x = net.Conv2D("conv1_conv", x, 64, 7, {.stride = 2, .padding = Padding::kValid});
  x = BatchNorm(net, "conv1_bn", x);
  x = net.Activate("conv1_relu", x, Activation::kRelu);
  x = net.ZeroPad("pool1_pad", x, 1, 1, 1, 1);
  x = net.MaxPool("pool1_pool", x, 3, {.stride = 2});
  x = Stack(net, x, 64, 3, 1, "conv2");
  x = Stack(net, x, 128, 4, 2, "conv3");
  x = Stack(net, x, 256, 6, 2, "conv4");
  x = Stack(net, x, 512, 3, 2, "conv5");
  x = net.GlobalAvgPool("avg_pool", x);
  net.Dense("probs", x, config.classes, {.activation = Activation::kSoftmax});
  return net;
}

}  // namespace remat
