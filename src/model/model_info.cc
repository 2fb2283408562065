// A built network's description: sizes and totals summed over its layers.
#include "model/model_info.h"

#include <utility>

namespace remat {

ModelInfo DescribeNetwork(const NetworkBuilder& net, std::string model) {
  ModelInfo info{.model = std::move(model),
                 .batch = net.batch(),
                 .input_shape = net.input_shape(),
                 .output_shape = net.layers().back().output_shape,
                 .input_bytes = NumElements(net.input_shape()) * kElementBytes,
                 .layers = net.layers()};
  for (const Layer& layer : net.layers()) {
    info.parameters += layer.parameters;
    info.trainable_parameters += layer.trainable_parameters;
    info.forward_flops += layer.flops;
  }
  return info;
}

}  // namespace remat
