// Imported torchvision / PyTorch models against the zoo's builders of the same architectures.
// The zoo follows keras.applications (the paper's graphs); the exports follow torchvision, so
// the tests compare what the two definitions share and state each difference:
// - VGG16: Keras fuses ReLU into each convolution and dense layer and softmax into the last
//   one and has no dropout; torchvision has separate ReLU nodes, two Dropout nodes, an
//   adaptive average pool (a 1x1 AveragePool at 224x224) and no softmax. Convolutions, pools
//   and dense layers then match one to one in bytes, and in FLOPs once the ReLU is added back.
// - ResNet-50: Keras pads explicitly (two ZeroPadding layers) and puts biases on convolutions;
//   torchvision pads inside Conv/MaxPool, has no conv biases, flattens before the classifier
//   and strides the 3x3 convolution of a block instead of the first 1x1 (v1.5), so per-layer
//   FLOPs differ but the block outputs do not.
// - Transformer: the zoo writes a GPT-2 block as 12 layers; the export has every elementwise
//   operation, the bias adds, the head reshapes and the GELU's erf form as nodes. The matrix
//   products and the layer norms are the same.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "onnx/onnx_import.h"
#include "zoo/registry.h"

namespace remat {
namespace {

ImportedOnnxModel Import(const std::string& name, int64_t batch) {
  return ImportOnnxFile(std::string(REMAT_ONNX_TESTDATA) + "/" + name, {.batch = batch});
}

std::vector<int32_t> OnnxNodesOf(const ImportedOnnxModel& model, const std::string& op) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < model.op_types.size(); ++i) {
    if (model.op_types[i] == op) ids.push_back(static_cast<int32_t>(i));
  }
  return ids;
}

std::vector<int32_t> ZooLayersOf(const ModelInfo& info, LayerKind kind) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < info.layers.size(); ++i) {
    if (info.layers[i].kind == kind) ids.push_back(static_cast<int32_t>(i));
  }
  return ids;
}

TEST(OnnxVsZooTest, Vgg16MatchesLayerByLayer) {
  constexpr int64_t kBatch = 2;  // the file is exported at batch 1: this also rescales
  const ImportedOnnxModel onnx = Import("vgg16.onnx", kBatch);
  const BuiltModel zoo = BuildModel("vgg16", {.batch = kBatch});
  const ModelInfo& info = zoo.info;
  // 22 Keras layers + 13 conv ReLUs + 2 dense ReLUs + 2 Dropouts + the adaptive pool = 40.
  EXPECT_EQ(info.layers.size(), 22u);
  EXPECT_EQ(onnx.forward.nodes.size(), 40u);

  const std::vector<int32_t> convs = OnnxNodesOf(onnx, "Conv");
  const std::vector<int32_t> zoo_convs = ZooLayersOf(info, LayerKind::kConv2D);
  ASSERT_EQ(convs.size(), 13u);
  ASSERT_EQ(zoo_convs.size(), 13u);
  for (size_t k = 0; k < convs.size(); ++k) {
    const Layer& layer = info.layers[zoo_convs[k]];
    SCOPED_TRACE(layer.name);
    const int32_t conv = convs[k];
    // NCHW and NHWC hold the same number of floats.
    EXPECT_EQ(onnx.forward.nodes[conv].bytes, layer.output_bytes());
    // The next node is the conv's ReLU: |out| FLOPs, which Keras counts in the conv.
    ASSERT_EQ(onnx.op_types[conv + 1], "Relu");
    EXPECT_DOUBLE_EQ(onnx.flops[conv] + onnx.flops[conv + 1], layer.flops);
  }
  const std::vector<int32_t> pools = OnnxNodesOf(onnx, "MaxPool");
  const std::vector<int32_t> zoo_pools = ZooLayersOf(info, LayerKind::kMaxPool);
  ASSERT_EQ(pools.size(), zoo_pools.size());
  for (size_t k = 0; k < pools.size(); ++k) {
    EXPECT_EQ(onnx.forward.nodes[pools[k]].bytes, info.layers[zoo_pools[k]].output_bytes()) << k;
  }
  const std::vector<int32_t> dense = OnnxNodesOf(onnx, "Gemm");
  const std::vector<int32_t> zoo_dense = ZooLayersOf(info, LayerKind::kDense);
  ASSERT_EQ(dense.size(), 3u);
  ASSERT_EQ(zoo_dense.size(), 3u);
  for (size_t k = 0; k < dense.size(); ++k) {
    const Layer& layer = info.layers[zoo_dense[k]];
    SCOPED_TRACE(layer.name);
    EXPECT_EQ(onnx.forward.nodes[dense[k]].bytes, layer.output_bytes());
    // fc1, fc2: + the separate ReLU; predictions: + the softmax Keras fuses, |out| = B * 1000.
    const double activation = k < 2 ? onnx.flops[dense[k] + 1] : kBatch * 1000.0;
    EXPECT_DOUBLE_EQ(onnx.flops[dense[k]] + activation, layer.flops);
  }
  EXPECT_EQ(onnx.forward.nodes.back().bytes, info.layers.back().output_bytes());
  // In total only the softmax differs: every other extra node (pool, flatten, dropout) is free.
  double onnx_flops = 0;
  for (double f : onnx.flops) onnx_flops += f;
  EXPECT_DOUBLE_EQ(onnx_flops, info.forward_flops - kBatch * 1000.0);
  EXPECT_EQ(onnx.trainable_parameters, info.trainable_parameters);
  // The same input batch: 2 x 224 x 224 x 3 floats.
  EXPECT_EQ(onnx.input_bytes, info.input_bytes);
}

TEST(OnnxVsZooTest, ResNet50BlocksMatch) {
  constexpr int64_t kBatch = 2;
  const ImportedOnnxModel onnx = Import("resnet50.onnx", kBatch);
  const BuiltModel zoo = BuildModel("resnet50", {.batch = kBatch});
  const ModelInfo& info = zoo.info;
  // Keras's 176 layers less its two ZeroPadding layers, plus torchvision's Flatten.
  EXPECT_EQ(info.layers.size(), 176u);
  EXPECT_EQ(ZooLayersOf(info, LayerKind::kZeroPadding).size(), 2u);
  EXPECT_EQ(onnx.forward.nodes.size(), 175u);
  EXPECT_EQ(OnnxNodesOf(onnx, "Conv").size(), ZooLayersOf(info, LayerKind::kConv2D).size());
  EXPECT_EQ(OnnxNodesOf(onnx, "BatchNormalization").size(),
            ZooLayersOf(info, LayerKind::kBatchNorm).size());
  // Every residual add (the output of each of the 16 blocks) has the same size.
  const std::vector<int32_t> adds = OnnxNodesOf(onnx, "Add");
  const std::vector<int32_t> zoo_adds = ZooLayersOf(info, LayerKind::kAdd);
  ASSERT_EQ(adds.size(), 16u);
  ASSERT_EQ(zoo_adds.size(), 16u);
  for (size_t k = 0; k < adds.size(); ++k) {
    EXPECT_EQ(onnx.forward.nodes[adds[k]].bytes, info.layers[zoo_adds[k]].output_bytes()) << k;
  }
  EXPECT_EQ(onnx.forward.nodes.back().bytes, info.layers.back().output_bytes());
  // Keras's extra trainable parameters are exactly its convolution biases, one per filter.
  int64_t conv_biases = 0;
  for (const int32_t id : ZooLayersOf(info, LayerKind::kConv2D)) {
    conv_biases += info.layers[id].output_shape.back();
  }
  EXPECT_EQ(info.trainable_parameters - onnx.trainable_parameters, conv_biases);
}

TEST(OnnxVsZooTest, TransformerMatrixProductsAndLayerNormsMatch) {
  // gpt_tiny.onnx is the zoo's transformer at layers 2, hidden 128, heads 4, seq 64, vocab 1000.
  constexpr int64_t kBatch = 2;
  const ImportedOnnxModel onnx = Import("gpt_tiny.onnx", kBatch);
  const BuiltModel zoo = BuildModel("transformer", {.batch = kBatch, .seq_length = 64,
                                                    .layers = 2, .hidden = 128, .heads = 4,
                                                    .vocab = 1000});
  const ModelInfo& info = zoo.info;
  // Same weights: embeddings, layer norms, the four dense layers per block, the tied head.
  EXPECT_EQ(onnx.trainable_parameters, info.parameters);
  // Per block: qkv, scores, context, proj, fc, mlp proj; and the head: 6 * 2 + 1 = 13.
  const std::vector<int32_t> matmuls = OnnxNodesOf(onnx, "MatMul");
  std::vector<int32_t> zoo_matmuls;
  for (size_t i = 0; i < info.layers.size(); ++i) {
    const LayerKind kind = info.layers[i].kind;
    if (kind == LayerKind::kDense || kind == LayerKind::kMatMul) {
      zoo_matmuls.push_back(static_cast<int32_t>(i));
    }
  }
  ASSERT_EQ(matmuls.size(), 13u);
  ASSERT_EQ(zoo_matmuls.size(), 13u);
  for (size_t k = 0; k < matmuls.size(); ++k) {
    const Layer& layer = info.layers[zoo_matmuls[k]];
    SCOPED_TRACE(layer.name);
    EXPECT_DOUBLE_EQ(onnx.flops[matmuls[k]], layer.flops);
    // The scores are per head (B, heads, S, S) in both; the other products' outputs match too.
    EXPECT_EQ(onnx.forward.nodes[matmuls[k]].bytes, layer.output_bytes());
  }
  const std::vector<int32_t> norms = OnnxNodesOf(onnx, "LayerNormalization");
  const std::vector<int32_t> zoo_norms = ZooLayersOf(info, LayerKind::kLayerNorm);
  ASSERT_EQ(norms.size(), zoo_norms.size());
  for (size_t k = 0; k < norms.size(); ++k) {
    EXPECT_DOUBLE_EQ(onnx.flops[norms[k]], info.layers[zoo_norms[k]].flops) << k;
    EXPECT_EQ(onnx.forward.nodes[norms[k]].bytes, info.layers[zoo_norms[k]].output_bytes()) << k;
  }
  // The logits: B x S x vocab floats.
  EXPECT_EQ(onnx.forward.nodes.back().bytes, kBatch * 64 * 1000 * 4);
  EXPECT_EQ(onnx.forward.nodes.back().bytes, info.layers.back().output_bytes());
}

}  // namespace
}  // namespace remat
