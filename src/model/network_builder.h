// The builder networks are written with, layer by layer: it infers each layer's output shape
// and counts its parameters and analytic FLOPs (docs/zoo.md lists the rules).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/layers.h"

namespace remat {

// Convolutions: square kernels, Keras's 'same'/'valid' padding, an optional fused activation.
struct ConvOptions {
  int64_t stride = 1;
  Padding padding = Padding::kSame;
  bool use_bias = true;
  Activation activation = Activation::kNone;
};

// A tied dense layer reads the token table of the embedding layer `tied_to` (GPT-2's output
// head: vocabulary-many units on the embedding's hidden width) and owns no weights.
struct DenseOptions {
  Activation activation = Activation::kNone;
  bool use_bias = true;
  std::optional<int32_t> tied_to;
};

struct PoolOptions {
  int64_t stride = 0;  // 0: the pool size, as Keras defaults
  Padding padding = Padding::kValid;
};

// Builds a network layer by layer. Layers are numbered in creation order; a layer can only read
// tensors that exist, so that order is topological. Shape errors (mismatched concat/add inputs,
// a window larger than its input) throw InputError naming the layer.
class NetworkBuilder {
 public:
  using Tensor = int32_t;
  static constexpr Tensor kInput = -1;  // the network's input batch

  NetworkBuilder(std::string name, Shape input_shape);

  const std::string& name() const { return name_; }
  const Shape& input_shape() const { return input_shape_; }
  int64_t batch() const { return input_shape_[0]; }
  const std::vector<Layer>& layers() const { return layers_; }
  const Shape& shape(Tensor tensor) const;
  int64_t bytes(Tensor tensor) const { return NumElements(shape(tensor)) * kElementBytes; }

  // FLOPs kernel^2 * Cin * |out| (+ |out| for a fused activation); params k^2*Cin*F (+F).
  Tensor Conv2D(const std::string& name, Tensor x, int64_t filters, int64_t kernel,
                ConvOptions options = {});
  // Depth multiplier 1: FLOPs kernel^2 * |out|; params k^2*C (+C).
  Tensor DepthwiseConv2D(const std::string& name, Tensor x, int64_t kernel,
                         ConvOptions options = {});
  // Every input element is scattered through a k x k x F kernel: FLOPs k^2 * F * |in|.
  Tensor Conv2DTranspose(const std::string& name, Tensor x, int64_t filters, int64_t kernel,
                         ConvOptions options = {});
  // Over the last axis: FLOPs rows * Cin * Cout (+ |out| for a fused activation).
  Tensor Dense(const std::string& name, Tensor x, int64_t units, DenseOptions options = {});
  // FLOPs 4*|in|; params 4C (2 trainable). Keras's defaults: epsilon 1e-3, momentum 0.99.
  Tensor BatchNorm(const std::string& name, Tensor x, double epsilon = 1e-3,
                   double momentum = 0.99);
  // FLOPs 4*|in|; params 2C. Epsilon 1e-5: GPT-2's (and PyTorch's default).
  Tensor LayerNorm(const std::string& name, Tensor x, double epsilon = 1e-5);
  Tensor Activate(const std::string& name, Tensor x, Activation activation);  // FLOPs |in|
  Tensor MaxPool(const std::string& name, Tensor x, int64_t pool, PoolOptions options = {});
  Tensor AvgPool(const std::string& name, Tensor x, int64_t pool, PoolOptions options = {});
  Tensor GlobalAvgPool(const std::string& name, Tensor x);  // NHWC -> NC
  Tensor ZeroPad(const std::string& name, Tensor x, int64_t top, int64_t bottom, int64_t left,
                 int64_t right);
  Tensor Crop(const std::string& name, Tensor x, int64_t top, int64_t bottom, int64_t left,
              int64_t right);
  Tensor UpSample(const std::string& name, Tensor x, int64_t factor);     // nearest neighbour
  Tensor Concat(const std::string& name, const std::vector<Tensor>& xs);  // along channels
  Tensor Add(const std::string& name, const std::vector<Tensor>& xs);     // FLOPs (k-1)*|out|
  Tensor Flatten(const std::string& name, Tensor x);
  // `dims` excludes the batch; their product must equal the input's.
  Tensor Reshape(const std::string& name, Tensor x, const Shape& dims);
  // `rate` in [0, 1): the probability of dropping an element.
  Tensor Dropout(const std::string& name, Tensor x, double rate);
  // (..., M, K) x (..., K, N) -> (..., M, N): FLOPs batch * M * K * N.
  Tensor MatMul(const std::string& name, Tensor a, Tensor b);
  // Token plus position embedding of (B, S) ids: (B, S, hidden); params (vocab + S) * hidden.
  Tensor Embedding(const std::string& name, Tensor tokens, int64_t vocab, int64_t hidden);
  // Multi-head attention on a fused (B, S, 3H) query/key/value tensor.
  // Scores Q K^T: (B, heads, S, S), FLOPs B * S * S * H (one dot product of H/heads per head).
  Tensor AttentionScores(const std::string& name, Tensor qkv, int64_t heads);
  // The softmax over the keys of attention scores, with the causal mask and the
  // 1/sqrt(head size) scale folded in (counted as one activation: FLOPs |in|).
  Tensor AttentionSoftmax(const std::string& name, Tensor scores);
  // Context P V: (B, S, H), FLOPs B * S * S * H.
  Tensor AttentionContext(const std::string& name, Tensor probs, Tensor qkv, int64_t heads);

  // The layers added from now on belong to the repeated block `block` ("" ends the block):
  // the module structure that checkpoint-blocks reads (Node::block).
  void SetBlock(std::string block) { block_ = std::move(block); }

 private:
  Tensor Push(Layer layer);
  [[noreturn]] void Fail(const std::string& layer_name, const std::string& what) const;
  const Shape& RequireRank(const std::string& layer_name, Tensor x, size_t rank) const;
  int64_t OutputLength(const std::string& layer_name, int64_t in, int64_t kernel, int64_t stride,
                       Padding padding) const;
  // A square window on (B, H, W, C): the output shape with `channels`, and the window's
  // kernel, stride, padding mode and resolved padding recorded in `layer`.
  Shape Window(Layer& layer, const Shape& in, int64_t kernel, int64_t stride, Padding padding,
               int64_t channels) const;

  std::string name_;
  Shape input_shape_;
  std::vector<Layer> layers_;
  std::string block_;
};

}  // namespace remat
