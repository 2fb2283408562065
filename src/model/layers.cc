// Shape sizes and names, and the names of the layer kinds.
#include "model/layers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

#include "core/errors.h"

namespace remat {
namespace {

// A tensor's byte size must fit in int64, so its element count may not exceed this.
constexpr int64_t kMaxElements = std::numeric_limits<int64_t>::max() / kElementBytes;

}  // namespace

int64_t NumElements(const Shape& shape) {
  int64_t product = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      throw InputError(fmt::format("negative dimension in shape {}", FormatShape(shape)));
    if (dim != 0 && product > kMaxElements / dim) {
      throw InputError(fmt::format("tensor of shape {} is too large: its byte size overflows int64",
                                   FormatShape(shape)));
    }
    product *= dim;
  }
  return product;
}

std::string FormatShape(const Shape& shape) { return fmt::format("{}", fmt::join(shape, "x")); }

const char* LayerKindName(LayerKind kind) {
  switch (kind) {
    case LayerKind::kConv2D: return "conv2d";
    case LayerKind::kDepthwiseConv2D: return "depthwise_conv2d";
    case LayerKind::kConv2DTranspose: return "conv2d_transpose";
    case LayerKind::kDense: return "dense";
    case LayerKind::kBatchNorm: return "batch_norm";
    case LayerKind::kLayerNorm: return "layer_norm";
    case LayerKind::kActivation: return "activation";
    case LayerKind::kMaxPool: return "max_pool";
    case LayerKind::kAvgPool: return "avg_pool";
    case LayerKind::kGlobalAvgPool: return "global_avg_pool";
    case LayerKind::kZeroPadding: return "zero_padding";
    case LayerKind::kCropping: return "cropping";
    case LayerKind::kUpSampling: return "upsampling";
    case LayerKind::kConcat: return "concat";
    case LayerKind::kAdd: return "add";
    case LayerKind::kFlatten: return "flatten";
    case LayerKind::kReshape: return "reshape";
    case LayerKind::kDropout: return "dropout";
    case LayerKind::kMatMul: return "matmul";
    case LayerKind::kEmbedding: return "embedding";
  }
  return "?";
}

bool IsContraction(LayerKind kind) {
  switch (kind) {
    case LayerKind::kConv2D:
    case LayerKind::kDepthwiseConv2D:
    case LayerKind::kConv2DTranspose:
    case LayerKind::kDense:
    case LayerKind::kMatMul:
      return true;
    default:
      return false;
  }
}

}  // namespace remat
