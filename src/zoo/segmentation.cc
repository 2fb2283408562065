// The paper's segmentation networks as keras_segmentation defines them: vgg_unet, fcn_8_vgg
// and segnet (vanilla encoder), each ending in a per-pixel softmax over the classes.
#include <fmt/format.h>

#include <string>

#include "core/errors.h"
#include "zoo/segmentation.h"
#include "zoo/vgg.h"

namespace remat {
namespace {

using Tensor = NetworkBuilder::Tensor;

// keras_segmentation get_segmentation_model: flatten the pixels, softmax over the classes.
void SegmentationHead(NetworkBuilder& net, Tensor x, const std::string& reshape_name,
                      const std::string& softmax_name) {
  const Shape& s = net.shape(x);
  x = net.Reshape(reshape_name, x, {s[1] * s[2], s[3]});
  net.Activate(softmax_name, x, Activation::kSoftmax);
}

// U-Net's decoder unit: zero-pad 1, 3x3 'valid' convolution with ReLU, batch norm. Keras
// numbers the three layers alike: zero_padding2d_k, conv2d_k, batch_normalization_k.
Tensor PadConvNorm(NetworkBuilder& net, Tensor x, int64_t filters, int index) {
  const std::string suffix = index == 0 ? "" : fmt::format("_{}", index);
  x = net.ZeroPad("zero_padding2d" + suffix, x, 1, 1, 1, 1);
  x = net.Conv2D("conv2d" + suffix, x, filters, 3,
                 {.padding = Padding::kValid, .activation = Activation::kRelu});
  return net.BatchNorm("batch_normalization" + suffix, x);
}

// keras_segmentation's crop(o1, o2) trims the larger tensor to the smaller one: columns on the
// right (one Cropping2D layer), then rows at the bottom (another). In FCN-8 the larger is
// always the upsampled score: a 4x4 stride-2 transposed convolution of floor(n/2) gives
// 2*floor(n/2) + 2 > n against its skip's n, at any resolution.
struct Excess {
  int64_t rows = 0;
  int64_t columns = 0;
};

Excess ExcessOver(const Shape& upsampled, const Shape& skip) {
  if (upsampled[1] <= skip[1] || upsampled[2] <= skip[2]) {
    throw InternalError(fmt::format("fcn8: upsampled score {} is not larger than its skip {}",
                                    FormatShape(upsampled), FormatShape(skip)));
  }
  return {.rows = upsampled[1] - skip[1], .columns = upsampled[2] - skip[2]};
}

}  // namespace

NetworkBuilder BuildVggUNet(const ImageConfig& config) {
  NetworkBuilder net("unet", {config.batch, config.height, config.width, 3});
  const std::vector<Tensor> f = AddVggBlocks(net, 16, 4);  // f1..f4: block1..4 pools
  Tensor x = PadConvNorm(net, f[3], 512, 0);
  x = net.UpSample("up_sampling2d", x, 2);
  x = net.Concat("concatenate", {x, f[2]});
  x = PadConvNorm(net, x, 256, 1);
  x = net.UpSample("up_sampling2d_1", x, 2);
  x = net.Concat("concatenate_1", {x, f[1]});
  x = PadConvNorm(net, x, 128, 2);
  x = net.UpSample("up_sampling2d_2", x, 2);
  x = net.Concat("concatenate_2", {x, f[0]});
  x = PadConvNorm(net, x, 64, 3);
  x = net.Conv2D("conv2d_4", x, config.classes, 3);
  SegmentationHead(net, x, "reshape", "activation");
  return net;
}

NetworkBuilder BuildFcn8Vgg(const ImageConfig& config) {
  NetworkBuilder net("fcn8", {config.batch, config.height, config.width, 3});
  const std::vector<Tensor> f = AddVggBlocks(net, 16, 5);
  const int64_t classes = config.classes;
  Tensor o = net.Conv2D("conv2d_5", f[4], 4096, 7, {.activation = Activation::kRelu});
  o = net.Dropout("dropout", o, 0.5);
  o = net.Conv2D("conv2d_6", o, 4096, 1, {.activation = Activation::kRelu});
  o = net.Dropout("dropout_1", o, 0.5);
  o = net.Conv2D("conv2d_7", o, classes, 1);
  const ConvOptions up = {.stride = 2, .padding = Padding::kValid, .use_bias = false};
  o = net.Conv2DTranspose("conv2d_transpose", o, classes, 4, up);

  // The paper's order: both crops, then the 1x1 score of f4 (same size as f4), then the add.
  Excess excess = ExcessOver(net.shape(o), net.shape(f[3]));
  o = net.Crop("cropping2d", o, 0, 0, 0, excess.columns);
  o = net.Crop("cropping2d_1", o, 0, excess.rows, 0, 0);
  const Tensor score4 = net.Conv2D("conv2d_8", f[3], classes, 1);
  o = net.Add("add", {o, score4});

  o = net.Conv2DTranspose("conv2d_transpose_1", o, classes, 4, up);
  // The paper's order: the width crop, the 1x1 score of f3, the height crop, the add.
  excess = ExcessOver(net.shape(o), net.shape(f[2]));
  o = net.Crop("cropping2d_2", o, 0, 0, 0, excess.columns);
  const Tensor score3 = net.Conv2D("conv2d_9", f[2], classes, 1);
  o = net.Crop("cropping2d_3", o, 0, excess.rows, 0, 0);
  o = net.Add("add_1", {score3, o});

  o = net.Conv2DTranspose("conv2d_transpose_2", o, classes, 16,
                          {.stride = 8, .padding = Padding::kValid, .use_bias = false});
  SegmentationHead(net, o, "reshape_1", "activation_1");
  return net;
}

NetworkBuilder BuildSegNet(const ImageConfig& config) {
  NetworkBuilder net("segnet", {config.batch, config.height, config.width, 3});
  // vanilla_encoder levels 1-4 (segnet reads the fourth level; the fifth is unused).
  const int64_t encoder_filters[4] = {64, 128, 256, 256};
  const int activation_index[4] = {2, 3, 4, 5};
  const std::string pools[4] = {"max_pooling2d", "max_pooling2d_1", "max_pooling2d_2",
                                "max_pooling2d_3"};
  Tensor x = NetworkBuilder::kInput;
  for (int level = 0; level < 4; ++level) {
    const int index = 4 + level;  // zero_padding2d_4, conv2d_10, batch_normalization_4, ...
    x = net.ZeroPad(fmt::format("zero_padding2d_{}", index), x, 1, 1, 1, 1);
    x = net.Conv2D(fmt::format("conv2d_{}", 10 + level), x, encoder_filters[level], 3,
                   {.padding = Padding::kValid});
    x = net.BatchNorm(fmt::format("batch_normalization_{}", index), x);
    x = net.Activate(fmt::format("activation_{}", activation_index[level]), x, Activation::kRelu);
    x = net.MaxPool(pools[level], x, 2);
  }
  // segnet_decoder with n_up = 3.
  const int64_t decoder_filters[4] = {512, 256, 128, 64};
  for (int level = 0; level < 4; ++level) {
    const int index = 9 + level;  // zero_padding2d_9, conv2d_15, batch_normalization_9, ...
    if (level > 0) x = net.UpSample(fmt::format("up_sampling2d_{}", 2 + level), x, 2);
    x = net.ZeroPad(fmt::format("zero_padding2d_{}", index), x, 1, 1, 1, 1);
    x = net.Conv2D(fmt::format("conv2d_{}", 15 + level), x, decoder_filters[level], 3,
                   {.padding = Padding::kValid});
    x = net.BatchNorm(fmt::format("batch_normalization_{}", index), x);
  }
  x = net.Conv2D("conv2d_19", x, config.classes, 3);
  SegmentationHead(net, x, "reshape_2", "activation_7");
  return net;
}

}  // namespace remat
