// Tensor shapes and the layer builder zoo networks are written with: every layer records its
// output shape, parameter count and analytic FLOPs (DESIGN §1, docs/zoo.md).
#pragma once

#include <cstdint>
#include <optional>
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
  double flops = 0;                  // forward FLOPs of DESIGN §1's analytic model
  // A product of its inputs (MatMul, attention's P V): the gradient with respect to one input
  // reads the others, which gives the training graph extra edges (ForwardNode's flag).
  bool backward_reads_inputs = false;

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
};

}  // namespace remat
