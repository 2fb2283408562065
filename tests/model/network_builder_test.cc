// Tests of src/model/network_builder.cc: shapes, parameter counts and the FLOP model of each
// layer kind.
#include "model/network_builder.h"

#include <gtest/gtest.h>

#include "core/errors.h"

namespace remat {
namespace {

using T = NetworkBuilder::Tensor;

TEST(Conv2DTest, SamePaddingKeepsSizeAndCountsKernelTimesOutput) {
  NetworkBuilder net("t", {2, 8, 8, 3});
  const T y = net.Conv2D("conv", NetworkBuilder::kInput, 4, 3);
  const Layer& l = net.layers()[y];
  EXPECT_EQ(l.output_shape, (Shape{2, 8, 8, 4}));
  EXPECT_EQ(l.parameters, 112);  // 3*3*3*4 weights + 4 biases
  EXPECT_EQ(l.trainable_parameters, 112);
  EXPECT_DOUBLE_EQ(l.flops, 13824);   // kh*kw*Cin*|out| = 3*3*3 * (2*8*8*4 = 512)
  EXPECT_EQ(l.output_bytes(), 2048);  // 512 floats
}

TEST(Conv2DTest, FusedActivationAddsOneFlopPerOutput) {
  NetworkBuilder net("t", {2, 8, 8, 3});
  const T y = net.Conv2D("conv", NetworkBuilder::kInput, 4, 3, {.activation = Activation::kRelu});
  EXPECT_DOUBLE_EQ(net.layers()[y].flops, 13824 + 512);
}

TEST(Conv2DTest, StridedValidAndSameFollowKeras) {
  NetworkBuilder net("t", {1, 9, 9, 3});
  // valid: floor((9 - 3) / 2) + 1 = 4; same: ceil(9 / 2) = 5.
  const T valid = net.Conv2D("valid", NetworkBuilder::kInput, 8, 3,
                             {.stride = 2, .padding = Padding::kValid, .use_bias = false});
  const T same = net.Conv2D("same", NetworkBuilder::kInput, 8, 3, {.stride = 2});
  EXPECT_EQ(net.shape(valid), (Shape{1, 4, 4, 8}));
  EXPECT_EQ(net.shape(same), (Shape{1, 5, 5, 8}));
  EXPECT_EQ(net.layers()[valid].parameters, 216);  // 3*3*3*8, no bias
}

TEST(Conv2DTest, WindowLargerThanInputIsAnInputErrorNamingTheLayer) {
  NetworkBuilder net("t", {1, 2, 2, 3});
  try {
    net.Conv2D("too_big", NetworkBuilder::kInput, 8, 3, {.padding = Padding::kValid});
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("too_big"), std::string::npos) << error.what();
  }
}

TEST(DepthwiseConv2DTest, OneFilterPerChannel) {
  NetworkBuilder net("t", {1, 8, 8, 32});
  const T y = net.DepthwiseConv2D("dw", NetworkBuilder::kInput, 3, {.use_bias = false});
  const Layer& l = net.layers()[y];
  EXPECT_EQ(l.output_shape, (Shape{1, 8, 8, 32}));
  EXPECT_EQ(l.parameters, 288);      // 3*3*32
  EXPECT_DOUBLE_EQ(l.flops, 18432);  // 3*3 * |out| = 9 * 2048
}

TEST(Conv2DTransposeTest, ValidStrideTwoKernelFourAsInFcn8) {
  NetworkBuilder net("t", {1, 13, 19, 19});
  const T y = net.Conv2DTranspose("up", NetworkBuilder::kInput, 19, 4,
                                  {.stride = 2, .padding = Padding::kValid, .use_bias = false});
  const Layer& l = net.layers()[y];
  // Keras: in * 2 + max(4 - 2, 0): 13 -> 28, 19 -> 40.
  EXPECT_EQ(l.output_shape, (Shape{1, 28, 40, 19}));
  EXPECT_EQ(l.parameters, 5776);  // 4*4*19*19
  // Each of the 13*19*19 = 4693 input elements is scattered through 4*4*19 = 304 weights.
  EXPECT_DOUBLE_EQ(l.flops, 4693.0 * 304.0);
}

TEST(DenseTest, BatchTimesInputsTimesOutputs) {
  NetworkBuilder net("t", {2, 10});
  const T y = net.Dense("fc", NetworkBuilder::kInput, 5);
  EXPECT_EQ(net.layers()[y].parameters, 55);     // 10*5 + 5
  EXPECT_DOUBLE_EQ(net.layers()[y].flops, 100);  // B*Cin*Cout = 2*10*5
}

TEST(DenseTest, AppliesToTheLastAxisAndTiedOwnsNothing) {
  NetworkBuilder net("t", {2, 3});
  const T embedding = net.Embedding("embedding", NetworkBuilder::kInput, 6, 4);  // (2, 3, 4)
  const T y = net.Dense("head", embedding, 6, {.use_bias = false, .tied_to = embedding});
  const Layer& l = net.layers()[y];
  EXPECT_EQ(l.output_shape, (Shape{2, 3, 6}));
  EXPECT_DOUBLE_EQ(l.flops, 144);  // 2*3 rows * 4 * 6
  EXPECT_EQ(l.parameters, 0);
  EXPECT_EQ(l.weights_read, 24);  // the tied 4x6 matrix is still read
  EXPECT_EQ(l.tied_to, embedding);
}

TEST(DenseTest, TiedWeightsMustBeAnEmbeddingsTable) {
  NetworkBuilder net("t", {2, 3});
  const T embedding = net.Embedding("embedding", NetworkBuilder::kInput, 6, 4);
  const T dense = net.Dense("dense", embedding, 6, {.use_bias = false});
  // The table is 6 x 4: 5 units, a dense layer, or a bias cannot be tied to it.
  EXPECT_THROW(net.Dense("five", embedding, 5, {.use_bias = false, .tied_to = embedding}),
               InputError);
  EXPECT_THROW(net.Dense("dense_tied", embedding, 6, {.use_bias = false, .tied_to = dense}),
               InputError);
  EXPECT_THROW(net.Dense("biased", embedding, 6, {.tied_to = embedding}), InputError);
}

TEST(NormalizationTest, BatchNormHasFourStatisticsTwoTrainable) {
  NetworkBuilder net("t", {2, 4, 4, 8});
  const T bn = net.BatchNorm("bn", NetworkBuilder::kInput);
  EXPECT_EQ(net.layers()[bn].parameters, 32);  // gamma, beta, mean, variance: 4*8
  EXPECT_EQ(net.layers()[bn].trainable_parameters, 16);
  EXPECT_DOUBLE_EQ(net.layers()[bn].flops, 1024);  // 4*|in| = 4*256
  const T ln = net.LayerNorm("ln", bn);
  EXPECT_EQ(net.layers()[ln].parameters, 16);  // gamma, beta: 2*8
  EXPECT_DOUBLE_EQ(net.layers()[ln].flops, 1024);
}

TEST(ZeroCostLayersTest, DataMovementCostsNothing) {
  NetworkBuilder net("t", {2, 8, 8, 4});
  const T pad = net.ZeroPad("pad", NetworkBuilder::kInput, 0, 1, 0, 1);
  const T pool = net.MaxPool("pool", pad, 3, {.stride = 2});
  const T avg = net.AvgPool("avg", NetworkBuilder::kInput, 2);
  const T up = net.UpSample("up", avg, 2);
  const T cat = net.Concat("cat", {up, NetworkBuilder::kInput});
  const T crop = net.Crop("crop", cat, 0, 1, 0, 2);
  const T drop = net.Dropout("drop", crop, 0.5);
  const T gap = net.GlobalAvgPool("gap", drop);
  const T flat = net.Flatten("flat", cat);
  const T reshape = net.Reshape("reshape", flat, {64, 8});
  EXPECT_EQ(net.shape(pad), (Shape{2, 9, 9, 4}));
  EXPECT_EQ(net.shape(pool), (Shape{2, 4, 4, 4}));  // floor((9 - 3) / 2) + 1
  EXPECT_EQ(net.shape(avg), (Shape{2, 4, 4, 4}));
  EXPECT_EQ(net.shape(up), (Shape{2, 8, 8, 4}));
  EXPECT_EQ(net.shape(cat), (Shape{2, 8, 8, 8}));
  EXPECT_EQ(net.shape(crop), (Shape{2, 7, 6, 8}));
  EXPECT_EQ(net.shape(gap), (Shape{2, 8}));
  EXPECT_EQ(net.shape(flat), (Shape{2, 512}));
  EXPECT_EQ(net.shape(reshape), (Shape{2, 64, 8}));
  for (const Layer& layer : net.layers()) {
    EXPECT_EQ(layer.flops, 0) << layer.name;
    EXPECT_EQ(layer.parameters, 0) << layer.name;
  }
}

TEST(ElementwiseTest, ActivationAndAddCountOnePerElement) {
  NetworkBuilder net("t", {2, 4, 4, 8});  // 256 elements
  const T relu = net.Activate("relu", NetworkBuilder::kInput, Activation::kRelu);
  const T add = net.Add("add", {relu, NetworkBuilder::kInput});
  const T add3 = net.Add("add3", {relu, add, NetworkBuilder::kInput});
  EXPECT_DOUBLE_EQ(net.layers()[relu].flops, 256);
  EXPECT_DOUBLE_EQ(net.layers()[add].flops, 256);   // one addition per element
  EXPECT_DOUBLE_EQ(net.layers()[add3].flops, 512);  // two additions per element
}

TEST(ShapeErrorsTest, MismatchedInputsAreInputErrors) {
  NetworkBuilder net("t", {1, 8, 8, 4});
  const T small = net.MaxPool("pool", NetworkBuilder::kInput, 2);
  EXPECT_THROW(net.Concat("cat", {small, NetworkBuilder::kInput}), InputError);
  EXPECT_THROW(net.Add("add", {small, NetworkBuilder::kInput}), InputError);
  EXPECT_THROW(net.Reshape("reshape", small, {7}), InputError);
  EXPECT_THROW(net.Crop("crop", small, 2, 2, 0, 0), InputError);  // 4 rows, 4 cropped
}

TEST(AttentionTest, ScoresAndContextShapesAndFlops) {
  // B = 2, S = 16, H = 32 with 4 heads of 8.
  NetworkBuilder net("t", {2, 16});
  const T x = net.Embedding("embedding", NetworkBuilder::kInput, 100, 32);
  const T qkv = net.Dense("qkv", x, 96);
  const T scores = net.AttentionScores("scores", qkv, 4);
  const T probs = net.AttentionSoftmax("softmax", scores);
  const T context = net.AttentionContext("context", probs, qkv, 4);
  EXPECT_EQ(net.layers()[x].parameters, 3712);  // (100 tokens + 16 positions) * 32
  EXPECT_EQ(net.shape(scores), (Shape{2, 4, 16, 16}));
  EXPECT_EQ(net.shape(context), (Shape{2, 16, 32}));
  // 4 heads * 16*16 dot products of length 8 per sample: 2 * 16*16*32 = 16384.
  EXPECT_DOUBLE_EQ(net.layers()[scores].flops, 16384);
  EXPECT_DOUBLE_EQ(net.layers()[context].flops, 16384);
  EXPECT_EQ(net.layers()[context].inputs, (std::vector<int32_t>{probs, qkv}));
  EXPECT_THROW(net.AttentionScores("bad", qkv, 5), InputError);  // 96 is not 3*5*k
}

TEST(MatMulTest, BatchedProduct) {
  NetworkBuilder net("t", {3, 4, 5});
  const T b = net.Dense("b", NetworkBuilder::kInput, 5);
  const T t = net.Reshape("t", b, {5, 4});
  const T y = net.MatMul("mm", NetworkBuilder::kInput, t);
  EXPECT_EQ(net.shape(y), (Shape{3, 4, 4}));
  EXPECT_DOUBLE_EQ(net.layers()[y].flops, 240);  // 3 * 4*4 outputs * 5
}

}  // namespace
}  // namespace remat
