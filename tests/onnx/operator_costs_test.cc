// Tests of the ONNX operator table and its FLOP rules (the zoo's analytic model).
#include "onnx/operator_costs.h"

#include <gtest/gtest.h>

namespace remat {
namespace {

TEST(FindOpCostRuleTest, KnowsTheStandardOperatorsOfCnnsAndTransformers) {
  for (const char* op : {"Conv", "ConvTranspose", "Gemm", "MatMul", "BatchNormalization",
                         "LayerNormalization", "Relu", "Sigmoid", "Erf", "Softmax", "MaxPool",
                         "AveragePool", "GlobalAveragePool", "Add", "Mul", "Sub", "Div",
                         "Concat", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze",
                         "ReduceMean", "Pow", "Sqrt", "Dropout", "Resize", "Upsample", "Pad",
                         "Slice", "Gather", "Where", "Split", "Clip"}) {
    EXPECT_TRUE(FindOpCostRule(op, "").has_value()) << op;
    EXPECT_TRUE(FindOpCostRule(op, "ai.onnx").has_value()) << op;
  }
}

TEST(FindOpCostRuleTest, UnknownOperatorsAndDomainsHaveNoRule) {
  EXPECT_FALSE(FindOpCostRule("LSTM", "").has_value());
  EXPECT_FALSE(FindOpCostRule("Einsum", "").has_value());
  EXPECT_FALSE(FindOpCostRule("conv", "").has_value());  // names are case-sensitive
  EXPECT_FALSE(FindOpCostRule("Conv", "com.example").has_value());
  EXPECT_EQ(FindOpCostRule("Gelu", "com.microsoft"), OpCostRule::kElementwise);
}

TEST(OpForwardFlopsTest, ConvIsKernelVolumeTimesInputChannelsTimesOutput) {
  // 2x16x8x8 output of a 3x3 conv over 4 channels: 3*3*4 * 2*16*8*8 = 73728.
  const OpShapes shapes{.inputs = {Shape{2, 4, 8, 8}, Shape{16, 4, 3, 3}, Shape{16}},
                        .output = {2, 16, 8, 8}};
  EXPECT_DOUBLE_EQ(*OpForwardFlops(OpCostRule::kConv, shapes), 73728);
}

TEST(OpForwardFlopsTest, DepthwiseConvCountsOneInputChannelPerOutput) {
  // group = 8: W is 8x1x3x3, so 3*3 * |out| = 9 * 1*8*4*4 = 1152 (the zoo's k*k*|out|).
  const OpShapes shapes{.inputs = {Shape{1, 8, 4, 4}, Shape{8, 1, 3, 3}},
                        .output = {1, 8, 4, 4}};
  EXPECT_DOUBLE_EQ(*OpForwardFlops(OpCostRule::kConv, shapes), 1152);
}

TEST(OpForwardFlopsTest, ConvTransposeScattersEachInputThroughTheKernel) {
  // Input 1x8x4x4, W 8x4x2x2 (Cin x Cout x k x k): 4*2*2 * 128 = 2048 (the zoo's k*k*F*|in|).
  const OpShapes shapes{.inputs = {Shape{1, 8, 4, 4}, Shape{8, 4, 2, 2}},
                        .output = {1, 4, 8, 8}};
  EXPECT_DOUBLE_EQ(*OpForwardFlops(OpCostRule::kConvTranspose, shapes), 2048);
}

TEST(OpForwardFlopsTest, GemmReadsKFromAAndTransA) {
  // A 4x8 (or 8x4 transposed), output 4x16: 4*8*16 = 512.
  EXPECT_DOUBLE_EQ(*OpForwardFlops(OpCostRule::kGemm,
                                   {.inputs = {Shape{4, 8}, Shape{16, 8}}, .output = {4, 16}}),
                   512);
  EXPECT_DOUBLE_EQ(
      *OpForwardFlops(OpCostRule::kGemm,
                      {.inputs = {Shape{8, 4}, Shape{8, 16}}, .output = {4, 16}, .trans_a = true}),
      512);
}

TEST(OpForwardFlopsTest, BatchedMatMulIsOutputTimesK) {
  // (2,4,64,32) x (2,4,32,64): 2*4*64*64 outputs of 32-long dot products = 1048576.
  const OpShapes shapes{.inputs = {Shape{2, 4, 64, 32}, Shape{2, 4, 32, 64}},
                        .output = {2, 4, 64, 64}};
  EXPECT_DOUBLE_EQ(*OpForwardFlops(OpCostRule::kMatMul, shapes), 1048576);
}

TEST(OpForwardFlopsTest, NormalizationElementwiseNaryAndFree) {
  const Shape x{2, 3, 4};  // 24 elements
  EXPECT_DOUBLE_EQ(*OpForwardFlops(OpCostRule::kNormalization, {.inputs = {x}, .output = x}), 96);
  EXPECT_DOUBLE_EQ(*OpForwardFlops(OpCostRule::kElementwise, {.inputs = {x}, .output = x}), 24);
  // A reduction reads every input element once: |in| = 24, not |out| = 6.
  EXPECT_DOUBLE_EQ(
      *OpForwardFlops(OpCostRule::kElementwise, {.inputs = {x}, .output = {2, 3, 1}}), 24);
  // Add of three inputs, one broadcast: (3-1) * |out| = 48.
  EXPECT_DOUBLE_EQ(
      *OpForwardFlops(OpCostRule::kNary, {.inputs = {x, x, Shape{4}}, .output = x}), 48);
  EXPECT_DOUBLE_EQ(*OpForwardFlops(OpCostRule::kFree, {.inputs = {x}, .output = x}), 0);
}

TEST(OpForwardFlopsTest, MissingWeightShapeIsReported) {
  EXPECT_FALSE(
      OpForwardFlops(OpCostRule::kConv, {.inputs = {Shape{1, 3, 8, 8}, std::nullopt},
                                         .output = {1, 8, 8, 8}})
          .has_value());
  EXPECT_FALSE(OpForwardFlops(OpCostRule::kGemm, {.inputs = {Shape{2, 3, 4}}, .output = {2, 5}})
                   .has_value());
}

}  // namespace
}  // namespace remat
