// Tests src/exec/layer_spec.cc: inferred kernels, strides and paddings of zoo layers.
#include "exec/layer_spec.h"

#include <gtest/gtest.h>

#include "zoo/registry.h"

namespace remat::exec {
namespace {

const ExecLayer& Find(const std::vector<ExecLayer>& layers, const std::string& name) {
  for (const ExecLayer& layer : layers) {
    if (layer.name == name) return layer;
  }
  throw std::runtime_error("no layer " + name);
}

TEST(LayerSpecTest, Vgg16ConvolutionsAreSame3x3WithReluAndSoftmaxHead) {
  const auto layers = DecodeLayers(BuildModel("vgg16", {.batch = 2, .resolution = Resolution{32, 32}}).info);
  const ExecLayer& conv = Find(layers, "block1_conv1");
  EXPECT_EQ(conv.kernel, 3);
  EXPECT_EQ(conv.stride, 1);
  EXPECT_EQ(conv.conv_padding, 1);
  EXPECT_TRUE(conv.use_bias);
  EXPECT_EQ(conv.activation, Activation::kRelu);
  EXPECT_EQ(Find(layers, "block1_pool").kernel, 2);
  EXPECT_EQ(Find(layers, "predictions").activation, Activation::kSoftmax);
  EXPECT_EQ(Find(layers, "fc1").activation, Activation::kRelu);
}

TEST(LayerSpecTest, ResNetStemAndStridedShortcut) {
  const auto layers = DecodeLayers(BuildModel("resnet50", {.batch = 1, .resolution = Resolution{64, 64}}).info);
  const ExecLayer& stem = Find(layers, "conv1_conv");
  EXPECT_EQ(stem.kernel, 7);
  EXPECT_EQ(stem.stride, 2);
  EXPECT_EQ(stem.conv_padding, 0);
  EXPECT_EQ(Find(layers, "pool1_pool").kernel, 3);
  EXPECT_EQ(Find(layers, "conv3_block1_0_conv").stride, 2);
  EXPECT_EQ(Find(layers, "conv1_pad").pad_top, 3);
  EXPECT_EQ(Find(layers, "conv1_relu").activation, Activation::kRelu);
}

TEST(LayerSpecTest, MobileNetPadsBottomRightAndUsesRelu6) {
  const auto layers = DecodeLayers(BuildModel("mobilenet", {.batch = 1, .resolution = Resolution{32, 32}}).info);
  const ExecLayer& pad = Find(layers, "conv_pad_2");
  EXPECT_EQ(pad.pad_top, 0);
  EXPECT_EQ(pad.pad_bottom, 1);
  EXPECT_EQ(pad.pad_right, 1);
  EXPECT_EQ(Find(layers, "conv_dw_2").stride, 2);
  EXPECT_FALSE(Find(layers, "conv_dw_2").use_bias);
  EXPECT_EQ(Find(layers, "conv_dw_1_relu").activation, Activation::kRelu6);
  EXPECT_EQ(Find(layers, "act_softmax").activation, Activation::kSoftmax);
}

TEST(LayerSpecTest, Fcn8TransposedConvolutionsAndCrops) {
  const auto layers = DecodeLayers(BuildModel("fcn8", {.batch = 1, .resolution = Resolution{64, 64}}).info);
  EXPECT_EQ(Find(layers, "conv2d_transpose").kernel, 4);
  EXPECT_EQ(Find(layers, "conv2d_transpose").stride, 2);
  EXPECT_EQ(Find(layers, "conv2d_transpose_2").stride, 8);
  EXPECT_EQ(Find(layers, "cropping2d").pad_right, 2);  // 2*2+2 = 6 columns against 4
  EXPECT_EQ(Find(layers, "cropping2d").pad_bottom, 0);
}

TEST(LayerSpecTest, TransformerAttentionEmbeddingAndTiedHead) {
  const auto layers = DecodeLayers(BuildModel("transformer", {.batch = 1, .seq_length = 8,
                                                              .layers = 1, .hidden = 8,
                                                              .heads = 2, .vocab = 16})
                                       .info);
  // (16 + 8) * 8 parameters: a 16-row token table and 8 positions.
  EXPECT_EQ(Find(layers, "embedding").vocab, 16);
  EXPECT_EQ(Find(layers, "h0_attn_scores").attention, AttentionPart::kScores);
  const ExecLayer& softmax = Find(layers, "h0_attn_softmax");
  EXPECT_EQ(softmax.attention, AttentionPart::kSoftmax);
  EXPECT_EQ(softmax.heads, 2);
  EXPECT_EQ(softmax.head_size, 4);  // 8 / 2
  const ExecLayer& context = Find(layers, "h0_attn_context");
  EXPECT_EQ(context.attention, AttentionPart::kContext);
  EXPECT_TRUE(context.backward_reads_inputs);
  EXPECT_EQ(Find(layers, "h0_mlp_gelu").activation, Activation::kGelu);
  EXPECT_TRUE(Find(layers, "h0_attn_qkv").use_bias);
  const ExecLayer& head = Find(layers, "lm_head");
  EXPECT_EQ(head.tied_to, 0);  // the embedding's token table
  EXPECT_FALSE(head.use_bias);
  EXPECT_EQ(head.activation, Activation::kNone);  // logits: the loss applies log-softmax
}

}  // namespace
}  // namespace remat::exec
