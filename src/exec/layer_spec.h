// Executable descriptions of zoo layers: kernel sizes, strides, paddings and activations that
// the zoo's Layer records only implicitly (in shapes, parameter counts and FLOPs) made explicit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zoo/layers.h"
#include "zoo/registry.h"

namespace remat::exec {

// The parts of causal multi-head attention: the zoo's two kMatMul layers (Q K^T on the fused
// (B, S, 3H) qkv tensor, P V) and the softmax between them, which also applies the causal
// mask and the 1/sqrt(head size) scale (docs/zoo.md).
enum class AttentionPart { kNone, kScores, kSoftmax, kContext };

// One forward layer with everything a kernel needs. Shapes are the zoo's (channels last);
// the executor stores image tensors channels-first (NCHW), which has the same element count.
// Token sequences keep the zoo's layout: (B, S) ids, (B, S, H) activations.
struct ExecLayer {
  std::string name;
  LayerKind kind = LayerKind::kActivation;
  std::vector<int32_t> inputs;  // earlier layer ids, or NetworkBuilder::kInput (-1)
  std::vector<Shape> input_shapes;
  Shape output_shape;
  int64_t kernel = 0;           // convolutions and pooling: square window
  int64_t stride = 1;
  int64_t conv_padding = 0;     // symmetric padding of a convolution ('same' at odd kernels)
  bool use_bias = false;
  Activation activation = Activation::kNone;  // fused into conv/dense, or an activation layer
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;  // zero padding, cropping
  double dropout_rate = 0;
  AttentionPart attention = AttentionPart::kNone;
  int64_t heads = 0;      // attention parts: number of heads
  int64_t head_size = 0;  // attention parts: H / heads
  int64_t vocab = 0;      // embedding: rows of the token table
  int32_t tied_to = -1;   // dense: the embedding whose token table it reads (GPT-2's head)
  // The zoo's flag: the gradient with respect to one input reads the other inputs (P V), which
  // the training graph provides as extra in-edges of the inputs' backward nodes.
  bool backward_reads_inputs = false;
};

// Decodes every layer of a zoo model. The zoo does not record options, so they are inferred
// and then checked: the inferred layer must reproduce the zoo's output shape, parameter count
// and FLOPs exactly, otherwise InputError names the layer. Rules where shapes are ambiguous
// (docs/exec.md): the smallest stride that fits; odd zero padding puts the extra row and
// column at the bottom/right (MobileNet's (0, 1)); cropping trims the bottom/right (FCN-8);
// pooling is 2x2 stride 2, else 3x3 stride 2; a fused or standalone activation is softmax on
// the last layer, GELU when named so, ReLU6 in MobileNet and ReLU otherwise; dropout rate 1e-3
// in MobileNet, 0.5 elsewhere (Keras's values). Transformer layers: an embedding's vocabulary
// from its parameter count, a dense layer without parameters of its own is tied to the
// embedding with its shape (GPT-2's head), a kMatMul with one input is the attention scores,
// one reading (B, heads, S, S) and (B, S, 3H) the context, a softmax on the scores the masked
// scaled attention softmax. Anything else the executor cannot run is an InputError naming
// the layer.
std::vector<ExecLayer> DecodeLayers(const ModelInfo& info);

}  // namespace remat::exec
