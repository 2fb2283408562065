// Tests src/exec/layer_spec.cc: the executor's layers are the zoo's stored layers, and layers
// the executor cannot run are refused with the model's and the layer's names.
#include "exec/layer_spec.h"

#include <gtest/gtest.h>

#include <string>

#include "core/errors.h"
#include "exec/network.h"
#include "zoo/registry.h"

namespace remat::exec {
namespace {

const ExecLayer& Find(const std::vector<ExecLayer>& layers, const std::string& name) {
  for (const ExecLayer& layer : layers) {
    if (layer.name == name) return layer;
  }
  throw std::runtime_error("no layer " + name);
}

// Small sizes of every zoo model: images 32x32 (the smallest every network takes), a two-block
// transformer.
ModelOptions SmallOptions(const ModelSpec& spec) {
  if (spec.is_transformer) {
    return {.batch = 1, .seq_length = 8, .layers = 2, .hidden = 8, .heads = 2, .vocab = 16};
  }
  return {.batch = 1, .resolution = Resolution{32, 32}, .classes = 10};
}

class ZooModelTest : public testing::TestWithParam<std::string> {};

TEST_P(ZooModelTest, ExecutorLayersAreTheStoredLayers) {
  const ModelInfo info = BuildModel(GetParam(), SmallOptions(ModelByName(GetParam()))).info;
  const std::vector<ExecLayer> layers = DecodeLayers(info);
  ASSERT_EQ(layers.size(), info.layers.size());
  for (size_t id = 0; id < layers.size(); ++id) {
    const Layer& stored = info.layers[id];
    EXPECT_TRUE(static_cast<const Layer&>(layers[id]) == stored) << stored.name;
    ASSERT_EQ(layers[id].input_shapes.size(), stored.inputs.size()) << stored.name;
    for (size_t k = 0; k < stored.inputs.size(); ++k) {
      const int32_t input = stored.inputs[k];
      EXPECT_EQ(layers[id].input_shapes[k],
                input < 0 ? info.input_shape : info.layers[input].output_shape)
          << stored.name;
    }
  }
}

TEST_P(ZooModelTest, ExecutorTensorsHaveTheZoosParameterCounts) {
  // Weights, biases, batch-norm statistics, embedding tables: 4 bytes per zoo parameter (a tied
  // head owns none), so every kernel and table was sized from the stored hyper-parameters.
  const ModelInfo info = BuildModel(GetParam(), SmallOptions(ModelByName(GetParam()))).info;
  const Network network(info, /*seed=*/7);
  EXPECT_EQ(network.parameter_bytes(), info.parameters * kElementBytes);
  EXPECT_EQ(network.gradient_bytes(), info.trainable_parameters * kElementBytes);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooModelTest,
                         testing::Values("vgg16", "vgg19", "resnet50", "mobilenet", "unet", "fcn8",
                                         "segnet", "transformer"),
                         [](const auto& param) { return param.param; });

TEST(LayerSpecTest, EveryZooModelIsTested) {
  EXPECT_EQ(ZooModels().size(), 8u);  // the list of ZooModelTest above
}

TEST(LayerSpecTest, Vgg16ConvolutionsAreSame3x3WithReluAndSoftmaxHead) {
  const auto layers =
      DecodeLayers(BuildModel("vgg16", {.batch = 2, .resolution = Resolution{32, 32}}).info);
  const ExecLayer& conv = Find(layers, "block1_conv1");
  EXPECT_EQ(conv.kernel, 3);
  EXPECT_EQ(conv.stride, 1);
  EXPECT_EQ(conv.pad, (Sides{1, 1, 1, 1}));  // 'same' at 3x3, stride 1
  EXPECT_TRUE(conv.use_bias);
  EXPECT_EQ(conv.activation, Activation::kRelu);
  EXPECT_EQ(Find(layers, "block1_pool").kernel, 2);
  EXPECT_EQ(Find(layers, "predictions").activation, Activation::kSoftmax);
  EXPECT_EQ(Find(layers, "fc1").activation, Activation::kRelu);
}

TEST(LayerSpecTest, ResNetStemStridedShortcutAndKerasEpsilon) {
  const auto layers =
      DecodeLayers(BuildModel("resnet50", {.batch = 1, .resolution = Resolution{64, 64}}).info);
  const ExecLayer& stem = Find(layers, "conv1_conv");
  EXPECT_EQ(stem.kernel, 7);
  EXPECT_EQ(stem.stride, 2);
  EXPECT_EQ(stem.pad, Sides{});  // 'valid' after an explicit 3-pixel zero padding
  EXPECT_EQ(Find(layers, "conv1_pad").pad, (Sides{3, 3, 3, 3}));
  EXPECT_EQ(Find(layers, "pool1_pool").kernel, 3);
  EXPECT_EQ(Find(layers, "conv3_block1_0_conv").stride, 2);
  EXPECT_EQ(Find(layers, "conv1_relu").activation, Activation::kRelu);
  EXPECT_DOUBLE_EQ(Find(layers, "conv1_bn").epsilon, 1.001e-5);  // keras resnet.py
  EXPECT_DOUBLE_EQ(Find(layers, "conv1_bn").momentum, 0.99);
}

TEST(LayerSpecTest, MobileNetPadsBottomRightUsesRelu6AndKerasDropout) {
  const auto layers =
      DecodeLayers(BuildModel("mobilenet", {.batch = 1, .resolution = Resolution{32, 32}}).info);
  EXPECT_EQ(Find(layers, "conv_pad_2").pad, (Sides{0, 1, 0, 1}));
  EXPECT_EQ(Find(layers, "conv_dw_2").stride, 2);
  EXPECT_FALSE(Find(layers, "conv_dw_2").use_bias);
  EXPECT_EQ(Find(layers, "conv_dw_1_relu").activation, Activation::kRelu6);
  EXPECT_EQ(Find(layers, "act_softmax").activation, Activation::kSoftmax);
  EXPECT_DOUBLE_EQ(Find(layers, "dropout").dropout_rate, 1e-3);
  EXPECT_DOUBLE_EQ(Find(layers, "conv1_bn").epsilon, 1e-3);  // Keras's default
}

TEST(LayerSpecTest, Fcn8TransposedConvolutionsCropsAndDropout) {
  const auto layers =
      DecodeLayers(BuildModel("fcn8", {.batch = 1, .resolution = Resolution{64, 64}}).info);
  EXPECT_EQ(Find(layers, "conv2d_transpose").kernel, 4);
  EXPECT_EQ(Find(layers, "conv2d_transpose").stride, 2);
  EXPECT_EQ(Find(layers, "conv2d_transpose_2").stride, 8);
  EXPECT_EQ(Find(layers, "cropping2d").pad, (Sides{0, 0, 0, 2}));  // 2*2+2 = 6 columns against 4
  EXPECT_EQ(Find(layers, "cropping2d_1").pad, (Sides{0, 2, 0, 0}));
  EXPECT_DOUBLE_EQ(Find(layers, "dropout").dropout_rate, 0.5);
}

TEST(LayerSpecTest, TransformerAttentionEmbeddingAndTiedHead) {
  const auto layers = DecodeLayers(BuildModel("transformer", {.batch = 1, .seq_length = 8,
                                                              .layers = 1, .hidden = 8,
                                                              .heads = 2, .vocab = 16})
                                       .info);
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
  EXPECT_DOUBLE_EQ(Find(layers, "h0_ln_1").epsilon, 1e-5);  // GPT-2's
  const ExecLayer& head = Find(layers, "lm_head");
  EXPECT_EQ(head.tied_to, 0);  // the embedding's token table
  EXPECT_FALSE(head.use_bias);
  EXPECT_EQ(head.activation, Activation::kNone);  // logits: the loss applies log-softmax
}

// A model of one builder's layers, as the registry would describe it.
ModelInfo InfoOf(const NetworkBuilder& net) {
  return {.model = net.name(),
          .batch = net.batch(),
          .input_shape = net.input_shape(),
          .output_shape = net.layers().back().output_shape,
          .layers = net.layers()};
}

// The InputError DecodeLayers throws, or "" when it throws none.
std::string DecodeError(const ModelInfo& info) {
  try {
    DecodeLayers(info);
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

TEST(LayerSpecTest, AsymmetricSamePaddingIsRefusedNamingModelAndLayer) {
  // 'same' 3x3 at stride 2 on 8 rows: 4 output rows need (4-1)*2 + 3 - 8 = 1 zero row, which
  // Keras puts at the bottom; ATen pads both sides alike.
  NetworkBuilder net("custom", {1, 8, 8, 3});
  net.Conv2D("conv", NetworkBuilder::kInput, 4, 3, {.stride = 2});
  const std::string what = DecodeError(InfoOf(net));
  EXPECT_NE(what.find("custom: layer 'conv'"), std::string::npos) << what;
  EXPECT_NE(what.find("asymmetric padding (top 0, bottom 1, left 0, right 1)"), std::string::npos)
      << what;
}

TEST(LayerSpecTest, SymmetricSamePaddingAtStrideTwoIsAccepted) {
  // 'same' 3x3 at stride 2 on 9 rows: 5 output rows, (5-1)*2 + 3 - 9 = 2 zeros, one per side.
  NetworkBuilder net("custom", {1, 9, 9, 3});
  const NetworkBuilder::Tensor conv = net.Conv2D("conv", NetworkBuilder::kInput, 4, 3,
                                                 {.stride = 2});
  EXPECT_EQ(DecodeError(InfoOf(net)), "");
  EXPECT_EQ(net.layers()[conv].pad, (Sides{1, 1, 1, 1}));
}

TEST(LayerSpecTest, FusedGeluAndPaddedPoolingAreRefused) {
  NetworkBuilder dense("fused", {2, 8});
  dense.Dense("fc", NetworkBuilder::kInput, 4, {.activation = Activation::kGelu});
  const std::string fused = DecodeError(InfoOf(dense));
  EXPECT_NE(fused.find("fused: layer 'fc' (dense): a fused GELU activation"), std::string::npos)
      << fused;

  NetworkBuilder pool("pooled", {1, 5, 5, 3});
  pool.MaxPool("pool", NetworkBuilder::kInput, 2, {.padding = Padding::kSame});
  const std::string padded = DecodeError(InfoOf(pool));
  EXPECT_NE(padded.find("pooled: layer 'pool' (max_pool): pooling that pads"), std::string::npos)
      << padded;
}

}  // namespace
}  // namespace remat::exec
