// The sizes of the zoo's networks (types only; each family's builder is in its own header:
// vgg.h, resnet.h, mobilenet.h, segmentation.h, transformer.h).
#pragma once

#include <cstdint>
#include <vector>

#include "model/layers.h"

namespace remat {

// An image network's input: batch x height x width x 3, and its number of output classes.
struct ImageConfig {
  int64_t batch = 1;
  int64_t height = 224;
  int64_t width = 224;
  int64_t classes = 1000;
};

// GPT-2 style decoder; the defaults are GPT-2 small.
struct TransformerConfig {
  int64_t layers = 12;
  int64_t hidden = 768;
  int64_t heads = 12;
  int64_t seq_length = 1024;
  int64_t vocab = 50257;
};

}  // namespace remat
