// Tensor shapes and the layers a network is made of: each layer records its
// output shape, parameter count and analytic FLOPs (docs/design.md §1, docs/zoo.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace remat {

// Dimensions with the batch first; images are NHWC, token sequences (batch, sequence).
using Shape = std::vector<int64_t>;

// Every tensor is float32 (token ids are int32, also 4 bytes).
inline constexpr int64_t kElementBytes = 4;

// Product of the dimensions. Throws InputError when it would overflow int64 bytes.
int64_t NumElements(const Shape& shape);
// "256x224x224x3".
std::string FormatShape(const Shape& shape);

enum class LayerKind {
  kConv2D,
  kDepthwiseConv2D,
  kConv2DTranspose,
  kDense,
  kBatchNorm,
  kLayerNorm,
  kActivation,
  kMaxPool,
  kAvgPool,
  kGlobalAvgPool,
  kZeroPadding,
  kCropping,
  kUpSampling,
  kConcat,
  kAdd,
  kFlatten,
  kReshape,
  kDropout,
  kMatMul,
  kEmbedding,
};

const char* LayerKindName(LayerKind kind);
// Convolutions, dense layers and matrix products (attention's two among them): the layers
// whose outputs selective recomputation keeps (Node::contraction).
bool IsContraction(LayerKind kind);

enum class Activation { kNone, kRelu, kRelu6, kSoftmax, kGelu };
enum class Padding { kSame, kValid };

// The parts of causal multi-head attention: Q K^T on the fused (B, S, 3H) query/key/value
// tensor, the softmax between the two products (which also applies the causal mask and the
// 1/sqrt(head size) scale), and P V.
enum class AttentionPart { kNone, kScores, kSoftmax, kContext };

// Rows (top, bottom) and columns (left, right) added around an image, or removed by cropping.
struct Sides {
  int64_t top = 0;
  int64_t bottom = 0;
  int64_t left = 0;
  int64_t right = 0;

  bool operator==(const Sides&) const = default;
};

// One layer of a network: one forward node of its graph.
struct Layer {
  std::string name;
  LayerKind kind = LayerKind::kActivation;
  std::vector<int32_t> inputs;  // ids of earlier layers, or NetworkBuilder::kInput
  Shape output_shape;
  int64_t parameters = 0;            // owned weights, batch-norm moving statistics included
  int64_t trainable_parameters = 0;  // the weights that get gradients and optimizer state
  int64_t weights_read = 0;          // weight elements read (a tied layer reads, not owns)
  double flops = 0;                  // forward FLOPs of docs/design.md §1's analytic model
  // A product of its inputs (MatMul, attention's P V): the gradient with respect to one input
  // reads the others, which gives the training graph extra edges (ForwardNode's flag).
  bool backward_reads_inputs = false;
  // The repeated block the layer belongs to ("" outside blocks): Node::block of its node.
  std::string block;

  // Hyper-parameters: what it takes to run the layer besides its shapes (docs/zoo.md). Fields
  // that do not apply to the layer's kind keep their defaults.
  int64_t kernel = 0;                 // convolution, pooling: the square window's side
  int64_t stride = 1;                 // convolution, pooling
  Padding padding = Padding::kValid;  // convolution, pooling: Keras's mode
  // Zeros added around the input: a convolution's or pooling's padding mode resolved as Keras
  // resolves 'same' (an odd total puts the extra row/column at the bottom/right), or a zero
  // padding layer's amounts. Cropping: the rows and columns it removes.
  Sides pad;
  int64_t upsampling = 0;  // upsampling: the factor along both axes
  bool use_bias = false;   // convolution, dense
  // Fused into a convolution or dense layer, or what an activation layer applies.
  Activation activation = Activation::kNone;
  double epsilon = 0;       // batch and layer norm: added to the variance
  double momentum = 0;      // batch norm: decay of the moving statistics (Keras's 0.99)
  double dropout_rate = 0;  // dropout: the probability of dropping an element
  AttentionPart attention = AttentionPart::kNone;
  int64_t heads = 0;      // attention parts
  int64_t head_size = 0;  // attention parts: H / heads
  int64_t vocab = 0;      // embedding: rows of the token table
  int32_t tied_to = -1;   // dense: the embedding whose token table it reads; -1: owns its weights

  int64_t output_bytes() const { return NumElements(output_shape) * kElementBytes; }
  bool operator==(const Layer&) const = default;
};

}  // namespace remat
