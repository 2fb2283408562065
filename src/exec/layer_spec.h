// The executor's view of a zoo model's layers: each zoo Layer as the zoo built it (with every
// hyper-parameter its kernels need), its input shapes, and a check that the executor can run it.
#pragma once

#include <vector>

#include "model/layers.h"
#include "model/model_info.h"

namespace remat::exec {

// One forward layer: the zoo's Layer, unchanged, and the shapes of its inputs. Shapes are the
// zoo's (channels last); the executor stores image tensors channels-first (NCHW), which has the
// same element count. Token sequences keep the zoo's layout: (B, S) ids, (B, S, H) activations.
struct ExecLayer : Layer {
  std::vector<Shape> input_shapes;  // in the order of `inputs`; the network input's for -1
};

// The layers of a zoo model as stored in `info.layers`, each checked against what the executor
// runs (docs/exec.md): convolutions with symmetric padding (Keras 'same' at odd kernels and
// stride 1, or 'valid'), 'valid' transposed convolutions with kernel >= stride, unpadded
// pooling, fused ReLU or softmax, dense layers on rank 2 (or rank-3 token) tensors, a tied
// dense layer reading an earlier embedding's table, reshapes that keep the channel axis, the
// matrix products of attention only, and softmax on token activations only as attention's.
// Anything else is an InputError naming the model and the layer.
std::vector<ExecLayer> DecodeLayers(const ModelInfo& info);

}  // namespace remat::exec
