// The zoo's network definitions, layer by layer in the order of
// shared/reference/paper-networks.md (the order of the graphs the Checkmate paper solved).
#pragma once

#include <cstdint>
#include <vector>

#include "zoo/layers.h"

namespace remat {

// An image network's input: batch x height x width x 3, and its number of output classes.
struct ImageConfig {
  int64_t batch = 1;
  int64_t height = 224;
  int64_t width = 224;
  int64_t classes = 1000;
};

// GPT-2 style decoder; the defaults are GPT-2 small.
struct TransformerConfig {
  int64_t layers = 12;
  int64_t hidden = 768;
  int64_t heads = 12;
  int64_t seq_length = 1024;
  int64_t vocab = 50257;
};

// VGG16 / VGG19 (keras.applications): depth is 16 or 19.
NetworkBuilder BuildVgg(int depth, const ImageConfig& config);
// Adds VGG blocks 1..blocks ('same' 3x3 convolutions with fused ReLU, 2x2 max-pooling) on the
// network input; returns the block pools (f1, f2, ...).
std::vector<NetworkBuilder::Tensor> AddVggBlocks(NetworkBuilder& net, int depth, int blocks);

NetworkBuilder BuildResNet50(const ImageConfig& config);
NetworkBuilder BuildMobileNetV1(const ImageConfig& config);

// keras_segmentation's vgg_unet, fcn_8_vgg and segnet (vanilla encoder).
NetworkBuilder BuildVggUNet(const ImageConfig& config);
NetworkBuilder BuildFcn8Vgg(const ImageConfig& config);
NetworkBuilder BuildSegNet(const ImageConfig& config);

// Pre-layer-norm decoder: embedding, `layers` blocks of attention and MLP, final layer norm,
// an output head tied to the token embedding. Input: (batch, seq_length) token ids.
NetworkBuilder BuildTransformer(int64_t batch, const TransformerConfig& config);

}  // namespace remat
