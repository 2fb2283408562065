// The supported ONNX operators and their analytic forward FLOPs (the zoo's model, docs/zoo.md).
#include "onnx/operator_costs.h"

#include <algorithm>
#include <array>
#include <utility>

namespace remat {
namespace {

using Rule = OpCostRule;

// Sorted by name for a binary search (checked at compile time below).
constexpr std::array<std::pair<std::string_view, Rule>, 108> kStandardOps = {{
    {"Abs", Rule::kElementwise},
    {"Acos", Rule::kElementwise},
    {"Add", Rule::kNary},
    {"And", Rule::kNary},
    {"ArgMax", Rule::kElementwise},
    {"ArgMin", Rule::kElementwise},
    {"Asin", Rule::kElementwise},
    {"Atan", Rule::kElementwise},
    {"AveragePool", Rule::kFree},
    {"BatchNormalization", Rule::kNormalization},
    {"BitShift", Rule::kNary},
    {"Cast", Rule::kFree},
    {"CastLike", Rule::kFree},
    {"Ceil", Rule::kElementwise},
    {"Celu", Rule::kElementwise},
    {"Clip", Rule::kElementwise},
    {"Concat", Rule::kFree},
    {"Conv", Rule::kConv},
    {"ConvTranspose", Rule::kConvTranspose},
    {"Cos", Rule::kElementwise},
    {"CumSum", Rule::kElementwise},
    {"DepthToSpace", Rule::kFree},
    {"Div", Rule::kNary},
    {"Dropout", Rule::kFree},
    {"Elu", Rule::kElementwise},
    {"Equal", Rule::kNary},
    {"Erf", Rule::kElementwise},
    {"Exp", Rule::kElementwise},
    {"Expand", Rule::kFree},
    {"Flatten", Rule::kFree},
    {"Floor", Rule::kElementwise},
    {"Gather", Rule::kFree},
    {"GatherElements", Rule::kFree},
    {"GatherND", Rule::kFree},
    {"Gelu", Rule::kElementwise},
    {"Gemm", Rule::kGemm},
    {"GlobalAveragePool", Rule::kFree},
    {"GlobalLpPool", Rule::kFree},
    {"GlobalMaxPool", Rule::kFree},
    {"Greater", Rule::kNary},
    {"GreaterOrEqual", Rule::kNary},
    {"GroupNormalization", Rule::kNormalization},
    {"HardSigmoid", Rule::kElementwise},
    {"HardSwish", Rule::kElementwise},
    {"Hardmax", Rule::kElementwise},
    {"Identity", Rule::kFree},
    {"InstanceNormalization", Rule::kNormalization},
    {"IsInf", Rule::kElementwise},
    {"IsNaN", Rule::kElementwise},
    {"LayerNormalization", Rule::kNormalization},
    {"LeakyRelu", Rule::kElementwise},
    {"Less", Rule::kNary},
    {"LessOrEqual", Rule::kNary},
    {"Log", Rule::kElementwise},
    {"LogSoftmax", Rule::kElementwise},
    {"LpNormalization", Rule::kNormalization},
    {"LpPool", Rule::kFree},
    {"MatMul", Rule::kMatMul},
    {"Max", Rule::kNary},
    {"MaxPool", Rule::kFree},
    {"Mean", Rule::kNary},
    {"MeanVarianceNormalization", Rule::kNormalization},
    {"Min", Rule::kNary},
    {"Mish", Rule::kElementwise},
    {"Mod", Rule::kNary},
    {"Mul", Rule::kNary},
    {"Neg", Rule::kElementwise},
    {"Not", Rule::kElementwise},
    {"Or", Rule::kNary},
    {"PRelu", Rule::kElementwise},
    {"Pad", Rule::kFree},
    {"Pow", Rule::kNary},
    {"Reciprocal", Rule::kElementwise},
    {"ReduceL1", Rule::kElementwise},
    {"ReduceL2", Rule::kElementwise},
    {"ReduceLogSum", Rule::kElementwise},
    {"ReduceLogSumExp", Rule::kElementwise},
    {"ReduceMax", Rule::kElementwise},
    {"ReduceMean", Rule::kElementwise},
    {"ReduceMin", Rule::kElementwise},
    {"ReduceProd", Rule::kElementwise},
    {"ReduceSum", Rule::kElementwise},
    {"ReduceSumSquare", Rule::kElementwise},
    {"Relu", Rule::kElementwise},
    {"Reshape", Rule::kFree},
    {"Resize", Rule::kFree},
    {"Round", Rule::kElementwise},
    {"Selu", Rule::kElementwise},
    {"Sigmoid", Rule::kElementwise},
    {"Sign", Rule::kElementwise},
    {"Sin", Rule::kElementwise},
    {"Slice", Rule::kFree},
    {"Softmax", Rule::kElementwise},
    {"Softplus", Rule::kElementwise},
    {"Softsign", Rule::kElementwise},
    {"SpaceToDepth", Rule::kFree},
    {"Split", Rule::kFree},
    {"Sqrt", Rule::kElementwise},
    {"Squeeze", Rule::kFree},
    {"Sub", Rule::kNary},
    {"Sum", Rule::kNary},
    {"Tanh", Rule::kElementwise},
    {"Tile", Rule::kFree},
    {"Transpose", Rule::kFree},
    {"Trilu", Rule::kFree},
    {"Unsqueeze", Rule::kFree},
    {"Upsample", Rule::kFree},
    {"Where", Rule::kElementwise},
}};
static_assert(std::is_sorted(kStandardOps.begin(), kStandardOps.end(),
                             [](const auto& a, const auto& b) { return a.first < b.first; }));

double Elements(const Shape& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

// prod(shape[1:]): a convolution kernel's reach per output (or input) element.
std::optional<double> KernelVolume(const std::optional<Shape>& weight) {
  if (!weight || weight->size() < 3) return std::nullopt;
  return Elements(Shape(weight->begin() + 1, weight->end()));
}

}  // namespace

std::optional<OpCostRule> FindOpCostRule(std::string_view op_type, std::string_view domain) {
  if (domain == "com.microsoft") {
    if (op_type == "Gelu" || op_type == "FastGelu") return Rule::kElementwise;
    return std::nullopt;
  }
  if (!domain.empty() && domain != "ai.onnx") return std::nullopt;
  const auto it = std::lower_bound(
      kStandardOps.begin(), kStandardOps.end(), op_type,
      [](const auto& entry, std::string_view name) { return entry.first < name; });
  if (it != kStandardOps.end() && it->first == op_type) return it->second;
  return std::nullopt;
}

std::optional<double> OpForwardFlops(OpCostRule rule, const OpShapes& shapes) {
  const std::optional<Shape> none;
  const std::optional<Shape>& in0 = shapes.inputs.empty() ? none : shapes.inputs[0];
  const std::optional<Shape>& in1 = shapes.inputs.size() < 2 ? none : shapes.inputs[1];
  const double out = Elements(shapes.output);
  switch (rule) {
    case Rule::kConv: {  // paper §1: kh*kw*Cin*|out|
      const std::optional<double> kernel = KernelVolume(in1);
      if (!kernel) return std::nullopt;
      return out * *kernel;
    }
    case Rule::kConvTranspose: {  // each input element scattered through the kernel
      const std::optional<double> kernel = KernelVolume(in1);
      if (!kernel || !in0) return std::nullopt;
      return Elements(*in0) * *kernel;
    }
    case Rule::kGemm: {
      if (!in0 || in0->size() != 2) return std::nullopt;
      const int64_t k = shapes.trans_a ? (*in0)[0] : (*in0)[1];
      return out * static_cast<double>(k);
    }
    case Rule::kMatMul: {
      if (!in0 || in0->empty()) return std::nullopt;
      return out * static_cast<double>(in0->back());
    }
    case Rule::kNormalization:
      if (!in0) return std::nullopt;
      return 4 * Elements(*in0);
    case Rule::kElementwise:
      return in0 ? std::max(Elements(*in0), out) : out;
    case Rule::kNary: {
      const auto present = std::count_if(shapes.inputs.begin(), shapes.inputs.end(),
                                         [](const auto& s) { return s.has_value(); });
      return static_cast<double>(std::max<int64_t>(present - 1, 0)) * out;
    }
    case Rule::kFree:
      return 0.0;
  }
  return std::nullopt;
}

KernelWork OpInputGradientWork(OpCostRule rule, double forward_flops, int64_t output_bytes,
                               int64_t input_bytes, int64_t other_bytes) {
  switch (rule) {
    case Rule::kConv:
    case Rule::kConvTranspose:
    case Rule::kGemm:
    case Rule::kMatMul:
      // The transposed product: the forward's FLOPs, reading the output gradient and the
      // other operand, writing the input gradient.
      return {.flops = forward_flops, .bytes_moved = output_bytes + other_bytes + input_bytes};
    case Rule::kNary: {
      // One operation per output element for each input (a copy for Add, a product for Mul).
      const double out = static_cast<double>(output_bytes / kElementBytes);
      return {.flops = forward_flops > 0 ? out : 0,
              .bytes_moved = output_bytes + 2 * input_bytes};
    }
    case Rule::kNormalization:
    case Rule::kElementwise:
    case Rule::kFree:
      // Read the output gradient and the input (or output), write the input gradient.
      return {.flops = forward_flops, .bytes_moved = output_bytes + 2 * input_bytes};
  }
  return {};
}

std::optional<KernelWork> OpWeightGradientWork(OpCostRule rule, double forward_flops,
                                               int64_t output_bytes, int64_t input_bytes,
                                               int64_t weight_bytes) {
  if (weight_bytes == 0) return std::nullopt;
  const double out = static_cast<double>(output_bytes / kElementBytes);
  const double in = static_cast<double>(input_bytes / kElementBytes);
  switch (rule) {
    case Rule::kConv:
    case Rule::kConvTranspose:
    case Rule::kGemm:
    case Rule::kMatMul:
      return KernelWork{.flops = forward_flops,
                        .bytes_moved = output_bytes + input_bytes + weight_bytes};
    case Rule::kNormalization:
      return KernelWork{.flops = 2 * in, .bytes_moved = output_bytes + input_bytes + weight_bytes};
    case Rule::kNary:
      // A bias or scale: the output gradient reduced onto the operand's shape.
      return KernelWork{.flops = out, .bytes_moved = output_bytes + weight_bytes};
    case Rule::kElementwise:
    case Rule::kFree:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace remat
