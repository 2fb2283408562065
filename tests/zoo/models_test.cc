// Tests of the zoo's networks: training-graph sizes (the paper's), published parameter
// totals, and output shapes at named layers.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "core/training_graph.h"
#include "zoo/registry.h"

namespace remat {
namespace {

const Layer& LayerNamed(const ModelInfo& info, const std::string& name) {
  for (const Layer& layer : info.layers) {
    if (layer.name == name) return layer;
  }
  ADD_FAILURE() << info.model << " has no layer " << name;
  static const Layer kNone;
  return kNone;
}

// With f forward layers and e forward edges the training graph has 2f+1 nodes and 3e+f+2
// edges (docs/design.md §1), so each pair below fixes f and e; the transformer's attn_context adds
// two product-rule edges per block (docs/semantics.md).
void ExpectTrainingSize(const std::string& model, int32_t nodes, size_t edges) {
  const Graph graph = BuildModelTrainingGraph(model);
  EXPECT_EQ(graph.size(), nodes);
  EXPECT_EQ(graph.edges().size(), edges);
  EXPECT_TRUE(graph.has_training_structure());
}

TEST(TrainingGraphSizeTest, Vgg16) { ExpectTrainingSize("vgg16", 45, 87); }            // f 22, e 21
TEST(TrainingGraphSizeTest, Vgg19) { ExpectTrainingSize("vgg19", 51, 99); }            // f 25, e 24
TEST(TrainingGraphSizeTest, ResNet50) { ExpectTrainingSize("resnet50", 353, 751); }    // 176, 191
TEST(TrainingGraphSizeTest, MobileNet) { ExpectTrainingSize("mobilenet", 185, 367); }  // 92, 91
TEST(TrainingGraphSizeTest, UNet) { ExpectTrainingSize("unet", 71, 148); }             // f 35, e 37
TEST(TrainingGraphSizeTest, Fcn8) { ExpectTrainingSize("fcn8", 73, 149); }             // f 36, e 37
TEST(TrainingGraphSizeTest, SegNet) { ExpectTrainingSize("segnet", 77, 151); }         // f 38, e 37
TEST(TrainingGraphSizeTest, TransformerGpt2Small) {
  // 1 embedding + 12 blocks of 12 layers + ln_f + lm_head = 147 layers; 15 edges per block
  // plus ln_f's and lm_head's = 182 edges: 295 nodes, 3*182 + 147 + 2 = 695 edges of docs/design.md
  // §1, and per block the product rule's attn_qkv -> bwd(attn_softmax) and
  // attn_softmax -> bwd(attn_qkv) (attn_context = P V): 695 + 2*12 = 719 edges.
  ExpectTrainingSize("transformer", 295, 719);
}

TEST(ParameterCountTest, Vgg16) { EXPECT_EQ(BuildModel("vgg16").info.parameters, 138357544); }

TEST(ParameterCountTest, Vgg19) { EXPECT_EQ(BuildModel("vgg19").info.parameters, 143667240); }

TEST(ParameterCountTest, ResNet50) {
  const ModelInfo info = BuildModel("resnet50").info;
  EXPECT_EQ(info.parameters, 25636712);
  // Keras: 53,120 non-trainable batch-norm statistics (2 per channel over 26,560 channels).
  EXPECT_EQ(info.trainable_parameters, 25583592);
}

TEST(ParameterCountTest, MobileNetV1) {
  const ModelInfo info = BuildModel("mobilenet").info;
  EXPECT_EQ(info.parameters, 4253864);
  EXPECT_EQ(info.trainable_parameters, 4231976);
}

TEST(ParameterCountTest, TransformerIsGpt2Small) {
  // wte 50257*768 + wpe 1024*768 + 12 * 7,087,872 per block + ln_f 1536 (head tied to wte).
  EXPECT_EQ(BuildModel("transformer").info.parameters, 124439808);
}

TEST(ParameterCountTest, ClassifierHeadFollowsClassCount) {
  // VGG16's predictions layer has 4096*1000 + 1000 parameters; with 10 classes 4096*10 + 10.
  const int64_t with_10 = BuildModel("vgg16", {.classes = 10}).info.parameters;
  EXPECT_EQ(138357544 - with_10, (4096 * 1000 + 1000) - (4096 * 10 + 10));
}

TEST(OutputShapeTest, Vgg16Block5PoolIsSevenBySevenBy512) {
  const ModelInfo info = BuildModel("vgg16").info;
  EXPECT_EQ(LayerNamed(info, "block5_pool").output_shape, (Shape{256, 7, 7, 512}));
  EXPECT_EQ(LayerNamed(info, "flatten").output_shape, (Shape{256, 25088}));
  EXPECT_EQ(info.output_shape, (Shape{256, 1000}));
}

TEST(OutputShapeTest, Vgg16BlockOneConvBytes) {
  // 256 * 224*224*64 floats = 822,083,584 elements, 3,288,334,336 bytes.
  const BuiltModel model = BuildModel("vgg16");
  EXPECT_EQ(model.forward.nodes[0].bytes, 3288334336);
  // conv 3*3*3 * |out| plus the fused ReLU's |out|: 28 * 822,083,584 FLOPs. It moves more
  // than a 28th of that: the 256*224*224*3 input, the output and 3*3*3*64 + 64 weights, so
  // its cost is the memory floor.
  EXPECT_DOUBLE_EQ(LayerNamed(model.info, "block1_conv1").flops, 28.0 * 822083584.0);
  EXPECT_DOUBLE_EQ(model.forward.nodes[0].cost,
                   kFlopsPerElementMoved * (256.0 * 224 * 224 * 3 + 822083584.0 + 1792));
}

TEST(OutputShapeTest, ResNet50Conv5OutIsSevenBySevenBy2048) {
  const ModelInfo info = BuildModel("resnet50").info;
  EXPECT_EQ(LayerNamed(info, "conv1_conv").output_shape, (Shape{256, 112, 112, 64}));
  EXPECT_EQ(LayerNamed(info, "pool1_pool").output_shape, (Shape{256, 56, 56, 64}));
  EXPECT_EQ(LayerNamed(info, "conv5_block3_out").output_shape, (Shape{256, 7, 7, 2048}));
  EXPECT_EQ(LayerNamed(info, "avg_pool").output_shape, (Shape{256, 2048}));
}

TEST(OutputShapeTest, MobileNetLastBlockIsSevenBySevenBy1024) {
  const ModelInfo info = BuildModel("mobilenet").info;
  EXPECT_EQ(LayerNamed(info, "conv1").output_shape, (Shape{512, 112, 112, 32}));  // pad 225
  EXPECT_EQ(LayerNamed(info, "conv_pw_13_relu").output_shape, (Shape{512, 7, 7, 1024}));
  EXPECT_EQ(LayerNamed(info, "reshape_1").output_shape, (Shape{512, 1, 1, 1024}));
}

TEST(OutputShapeTest, UNetOutputIsHalfResolution) {
  const ModelInfo info = BuildModel("unet").info;
  // 416x608 in, 208x304 out: 63,232 pixels of 19 classes.
  EXPECT_EQ(LayerNamed(info, "conv2d_4").output_shape, (Shape{32, 208, 304, 19}));
  EXPECT_EQ(info.output_shape, (Shape{32, 63232, 19}));
  // f3 (52x76x256) joins the 512-channel upsampled decoder: 768 channels.
  EXPECT_EQ(LayerNamed(info, "concatenate").output_shape, (Shape{32, 52, 76, 768}));
}

TEST(OutputShapeTest, Fcn8CropsToTheSkipAndUpsamplesByEight) {
  const ModelInfo info = BuildModel("fcn8").info;
  // f5 is 13x19; the 4x4 stride-2 transposed conv gives 28x40, cropped to f4's 26x38.
  EXPECT_EQ(LayerNamed(info, "conv2d_transpose").output_shape, (Shape{32, 28, 40, 19}));
  EXPECT_EQ(LayerNamed(info, "add").output_shape, (Shape{32, 26, 38, 19}));
  // 26x38 -> 54x78, cropped to f3's 52x76; then (52-1)*8+16 = 424, (76-1)*8+16 = 616.
  EXPECT_EQ(LayerNamed(info, "add_1").output_shape, (Shape{32, 52, 76, 19}));
  EXPECT_EQ(LayerNamed(info, "conv2d_transpose_2").output_shape, (Shape{32, 424, 616, 19}));
}

TEST(OutputShapeTest, SegNetOutputIsHalfResolution) {
  const ModelInfo info = BuildModel("segnet").info;
  EXPECT_EQ(LayerNamed(info, "max_pooling2d_3").output_shape, (Shape{32, 26, 38, 256}));
  EXPECT_EQ(LayerNamed(info, "conv2d_19").output_shape, (Shape{32, 208, 304, 19}));
}

TEST(OutputShapeTest, TransformerAttentionScoresAreSequenceSquared) {
  const ModelInfo info = BuildModel("transformer", {.batch = 2}).info;
  EXPECT_EQ(LayerNamed(info, "h0_attn_scores").output_shape, (Shape{2, 12, 1024, 1024}));
  EXPECT_EQ(LayerNamed(info, "h11_mlp_fc").output_shape, (Shape{2, 1024, 3072}));
  EXPECT_EQ(info.output_shape, (Shape{2, 1024, 50257}));
  // Q K^T: 2 samples * 1024*1024 dot products of 64 in each of 12 heads = 2 * 1024^2 * 768.
  EXPECT_DOUBLE_EQ(LayerNamed(info, "h0_attn_scores").flops, 2.0 * 1024 * 1024 * 768);
}

TEST(TrainingGraphSizeTest, TransformerAttentionGradientsReadTheOtherFactor) {
  // One block: embedding 0, ln_1 1, attn_qkv 2, attn_scores 3, attn_softmax 4, attn_context 5,
  // ..., f = 15 layers, bwd(i) = 30 - i. attn_context = P V multiplies the softmax (4) and the
  // qkv (2): bwd(softmax) = 26 reads qkv, bwd(qkv) = 28 reads the softmax.
  const ModelOptions options{.batch = 1, .seq_length = 4, .layers = 1, .hidden = 8, .heads = 2,
                             .vocab = 10};
  const ModelInfo info = BuildModel("transformer", options).info;
  ASSERT_EQ(info.layers.size(), 15u);
  ASSERT_EQ(info.layers[5].name, "h0_attn_context");
  for (const Layer& layer : info.layers) {
    EXPECT_EQ(layer.backward_reads_inputs, layer.name == "h0_attn_context") << layer.name;
  }
  const Graph graph = BuildModelTrainingGraph("transformer", options);
  auto reads = [&graph](int32_t v, int32_t u) {
    const std::vector<int32_t>& preds = graph.preds(v);
    return std::find(preds.begin(), preds.end(), u) != preds.end();
  };
  EXPECT_TRUE(reads(26, 2));
  EXPECT_TRUE(reads(28, 4));
  // bwd(softmax) = 26 reads: the softmax, its consumer attn_context (5) and bwd(5) = 25 (docs/design.md
  // §1), and the other factor qkv (2).
  EXPECT_EQ(graph.preds(26), (std::vector<int32_t>{2, 4, 5, 25}));
  // 15 forward edges + ln_f's and lm_head's = 17: 3*17 + 15 + 2 = 68, plus 2 = 70 edges.
  EXPECT_EQ(graph.edges().size(), 70u);
}

TEST(ResolutionTest, Vgg16At112HasThreeByThreeBlock5) {
  const ModelInfo info = BuildModel("vgg16", {.resolution = Resolution{112, 112}}).info;
  EXPECT_EQ(LayerNamed(info, "block5_pool").output_shape, (Shape{256, 3, 3, 512}));
  // fc1 now reads 3*3*512 = 4608 inputs: (4608 + 1) * 4096 parameters.
  EXPECT_EQ(LayerNamed(info, "fc1").parameters, 4609 * 4096);
}

TEST(ResolutionTest, SegmentationAtAnotherMultipleOf32) {
  const ModelInfo info = BuildModel("unet", {.resolution = Resolution{256, 320}}).info;
  EXPECT_EQ(info.output_shape, (Shape{32, 128 * 160, 19}));
  EXPECT_EQ(BuildModelTrainingGraph("fcn8", {.resolution = Resolution{256, 320}}).size(), 73);
}

TEST(ResolutionTest, Fcn8CropsTheUpsampledScoreAtOddSizes) {
  // 100x130: pools give 50x65, 25x32, 12x16, 6x8 (f4), 3x4 (f5). The first transposed conv
  // gives 8x10, cropped by 2 rows and 2 columns to f4's 6x8; the second gives 14x18 against
  // f3's 12x16; the last (12-1)*8+16 = 104 by (16-1)*8+16 = 136.
  const ModelOptions options{.batch = 1, .resolution = Resolution{100, 130}};
  const ModelInfo info = BuildModel("fcn8", options).info;
  EXPECT_EQ(LayerNamed(info, "add").output_shape, (Shape{1, 6, 8, 19}));
  EXPECT_EQ(LayerNamed(info, "add_1").output_shape, (Shape{1, 12, 16, 19}));
  EXPECT_EQ(LayerNamed(info, "conv2d_transpose_2").output_shape, (Shape{1, 104, 136, 19}));
  const Graph graph = BuildModelTrainingGraph("fcn8", options);
  EXPECT_EQ(graph.size(), 73);
  EXPECT_EQ(graph.edges().size(), 149u);
}

// FNV-1a over the fields of every layer that shape a graph (name, kind, inputs, output shape,
// parameter counts, weights read, FLOPs, the product-rule flag), at the default sizes. The
// digests were taken before the layers recorded their hyper-parameters: recording them must
// not change any zoo graph.
uint64_t LayerDigest(const std::string& model) {
  uint64_t hash = 14695981039346656037ull;
  auto mix = [&hash](const std::string& text) {
    for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
    hash = (hash ^ 0xff) * 1099511628211ull;  // field separator
  };
  for (const Layer& layer : BuildModel(model).info.layers) {
    mix(layer.name);
    mix(LayerKindName(layer.kind));
    for (int32_t input : layer.inputs) mix(std::to_string(input));
    mix(FormatShape(layer.output_shape));
    mix(std::to_string(layer.parameters));
    mix(std::to_string(layer.trainable_parameters));
    mix(std::to_string(layer.weights_read));
    mix(fmt::format("{:.17g}", layer.flops));
    mix(layer.backward_reads_inputs ? "reads" : "-");
  }
  return hash;
}

TEST(ZooGraphsUnchangedTest, LayerRecordsKeepTheirDigests) {
  const std::pair<const char*, uint64_t> expected[] = {
      {"vgg16", 4085788711237995180ull},     {"vgg19", 6167521016646049925ull},
      {"resnet50", 2861938899936935859ull},  {"mobilenet", 17526428866721407483ull},
      {"unet", 2064149904825741503ull},      {"fcn8", 7631001217206497987ull},
      {"segnet", 11454899365955819471ull},   {"transformer", 15694540343810896270ull},
  };
  for (const auto& [model, digest] : expected) {
    EXPECT_EQ(LayerDigest(model), digest) << model;
  }
}

}  // namespace
}  // namespace remat
