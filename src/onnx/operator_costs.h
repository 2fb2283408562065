// The ONNX operators the importer supports and their forward FLOPs, by the zoo's analytic model
// (docs/design.md §1, docs/zoo.md "Cost model flops"); docs/onnx.md lists them. Free of ONNX headers so
// that it can be tested on plain shapes.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "model/kernel_work.h"
#include "model/layers.h"

namespace remat {

// How an operator's forward FLOPs follow from its shapes.
enum class OpCostRule {
  kConv,           // |out| * prod(W.shape[1:]) = kh*kw*(Cin/group)*|out|
  kConvTranspose,  // |in| * prod(W.shape[1:]) = kh*kw*(Cout/group)*|in|
  kGemm,           // M*K*N = |out| * K, K from A's shape and transA
  kMatMul,         // batch*M*K*N = |out| * K, K the last dimension of A
  kNormalization,  // 4*|in| (batch, layer, instance and group norm)
  kElementwise,    // max(|in0|, |out|): activations, unary math, softmax, reductions, Where
  kNary,           // (k-1)*|out| for k inputs: Add, Sub, Mul, Div, Pow, Max, comparisons...
  kFree,           // 0: pooling, padding, concat, reshape, transpose, slice, gather, resize,
                   // dropout, cast (copies and data movement, as in the zoo)
};

// The rule of an operator, or nullopt when remat does not support it. `domain` "" and
// "ai.onnx" are the standard operators; of other domains only Gelu and FastGelu (as exported
// to com.microsoft) are known.
std::optional<OpCostRule> FindOpCostRule(std::string_view op_type, std::string_view domain);

// The shapes a rule reads. Missing optional inputs are nullopt; shapes include the batch.
struct OpShapes {
  std::vector<std::optional<Shape>> inputs;
  Shape output;          // the first output
  bool trans_a = false;  // Gemm's transA
};

// Forward FLOPs of one node (a multiply-accumulate is one FLOP, biases are free, as in the
// zoo). Returns nullopt when a shape the rule needs is missing or of the wrong rank.
std::optional<double> OpForwardFlops(OpCostRule rule, const OpShapes& shapes);

// The backward work of one node, by the zoo's rules (docs/onnx.md, "Backward costs"), from
// its rule, its forward FLOPs and the bytes of the tensors involved (at the graph's batch).
// `output_bytes` is the node's first output (its gradient is read), `input_bytes` the input
// the gradient is for, `other_bytes` what else the kernel reads: the weights of a
// convolution, Gemm or MatMul with a static operand, the other factor of a product of two
// activations, else 0.
KernelWork OpInputGradientWork(OpCostRule rule, double forward_flops, int64_t output_bytes,
                               int64_t input_bytes, int64_t other_bytes);
// The gradients of a node's static operands, for the rules whose static operands are
// trainable (convolutions, Gemm, MatMul, normalisations, and n-ary operators such as a bias
// Add or a scale Mul); nullopt for the others (shapes, pads, indices and clip bounds are not
// trained) and when `weight_bytes` is 0.
std::optional<KernelWork> OpWeightGradientWork(OpCostRule rule, double forward_flops,
                                               int64_t output_bytes, int64_t input_bytes,
                                               int64_t weight_bytes);

}  // namespace remat
