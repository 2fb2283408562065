// The paper's segmentation networks as keras_segmentation defines them: vgg_unet, fcn_8_vgg
// and segnet (vanilla encoder), each ending in a per-pixel softmax over the classes.
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "zoo/networks.h"

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

// Zero-pad 1, 3x3 'valid' convolution, batch norm: the decoder's unit.
Tensor PadConvNorm(NetworkBuilder& net, Tensor x, int64_t filters, Activation activation,
                   int index, int norm_index) {
  const std::string suffix = index == 0 ? "" : fmt::format("_{}", index);
  const std::string norm_suffix = norm_index == 0 ? "" : fmt::format("_{}", norm_index);
  x = net.ZeroPad("zero_padding2d" + suffix, x, 1, 1, 1, 1);
  x = net.Conv2D("conv2d" + suffix, x, filters, 3,
                 {.padding = Padding::kValid, .activation = activation});
  return net.BatchNorm("batch_normalization" + norm_suffix, x);
}

// keras_segmentation crop(o1, o2): the wider tensor loses cx columns on the right, then the
// taller loses cy rows at the bottom; on a tie the second is "cropped" by zero.
struct CropPlan {
  bool first_wider = false;
  int64_t cx = 0;
  bool first_taller = false;
  int64_t cy = 0;
};

CropPlan PlanCrop(const Shape& first, const Shape& second) {
  return {.first_wider = first[2] > second[2],
          .cx = std::abs(first[2] - second[2]),
          .first_taller = first[1] > second[1],
          .cy = std::abs(first[1] - second[1])};
}

Shape WithChannels(Shape shape, int64_t channels) {
  shape.back() = channels;
  return shape;
}

}  // namespace

NetworkBuilder BuildVggUNet(const ImageConfig& config) {
  NetworkBuilder net("unet", {config.batch, config.height, config.width, 3});
  const std::vector<Tensor> f = AddVggBlocks(net, 16, 4);  // f1..f4: block1..4 pools
  Tensor x = PadConvNorm(net, f[3], 512, Activation::kRelu, 0, 0);
  x = net.UpSample("up_sampling2d", x, 2);
  x = net.Concat("concatenate", {x, f[2]});
  x = PadConvNorm(net, x, 256, Activation::kRelu, 1, 1);
  x = net.UpSample("up_sampling2d_1", x, 2);
  x = net.Concat("concatenate_1", {x, f[1]});
  x = PadConvNorm(net, x, 128, Activation::kRelu, 2, 2);
  x = net.UpSample("up_sampling2d_2", x, 2);
  x = net.Concat("concatenate_2", {x, f[0]});
  x = PadConvNorm(net, x, 64, Activation::kRelu, 3, 3);
  x = net.Conv2D("conv2d_4", x, config.classes, 3);
  SegmentationHead(net, x, "reshape", "activation");
  return net;
}

NetworkBuilder BuildFcn8Vgg(const ImageConfig& config) {
  NetworkBuilder net("fcn8", {config.batch, config.height, config.width, 3});
  const std::vector<Tensor> f = AddVggBlocks(net, 16, 5);
  const int64_t classes = config.classes;
  Tensor o = net.Conv2D("conv2d_5", f[4], 4096, 7, {.activation = Activation::kRelu});
  o = net.Dropout("dropout", o);
  o = net.Conv2D("conv2d_6", o, 4096, 1, {.activation = Activation::kRelu});
  o = net.Dropout("dropout_1", o);
  o = net.Conv2D("conv2d_7", o, classes, 1);
  const ConvOptions up = {.stride = 2, .padding = Padding::kValid, .use_bias = false};
  o = net.Conv2DTranspose("conv2d_transpose", o, classes, 4, up);

  // crop(o, o2) with o2 the 1x1 score of f4; o's crops come first, as in the paper's order.
  CropPlan plan = PlanCrop(net.shape(o), WithChannels(net.shape(f[3]), classes));
  if (plan.first_wider) o = net.Crop("cropping2d", o, 0, 0, 0, plan.cx);
  if (plan.first_taller) o = net.Crop("cropping2d_1", o, 0, plan.cy, 0, 0);
  Tensor o2 = net.Conv2D("conv2d_8", f[3], classes, 1);
  if (!plan.first_wider) o2 = net.Crop("cropping2d", o2, 0, 0, 0, plan.cx);
  if (!plan.first_taller) o2 = net.Crop("cropping2d_1", o2, 0, plan.cy, 0, 0);
  o = net.Add("add", {o, o2});

  o = net.Conv2DTranspose("conv2d_transpose_1", o, classes, 4, up);
  // crop(o2, o) with o2 the 1x1 score of f3; the paper's order: o's width crop, the score,
  // then the height crop.
  plan = PlanCrop(WithChannels(net.shape(f[2]), classes), net.shape(o));
  if (!plan.first_wider) o = net.Crop("cropping2d_2", o, 0, 0, 0, plan.cx);
  o2 = net.Conv2D("conv2d_9", f[2], classes, 1);
  if (plan.first_wider) o2 = net.Crop("cropping2d_2", o2, 0, 0, 0, plan.cx);
  if (plan.first_taller) {
    o2 = net.Crop("cropping2d_3", o2, 0, plan.cy, 0, 0);
  } else {
    o = net.Crop("cropping2d_3", o, 0, plan.cy, 0, 0);
  }
  o = net.Add("add_1", {o2, o});

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
    x = net.Activate(fmt::format("activation_{}", activation_index[level]), x,
                     Activation::kRelu);
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
