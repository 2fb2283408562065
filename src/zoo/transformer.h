// A GPT-2 style decoder.
#pragma once

#include <cstdint>
#include <vector>

#include "model/network_builder.h"
#include "zoo/networks.h"

namespace remat {

// Pre-layer-norm decoder: embedding, `layers` blocks of attention and MLP, final layer norm,
// an output head tied to the token embedding. Input: (batch, seq_length) token ids.
NetworkBuilder BuildTransformer(int64_t batch, const TransformerConfig& config);

}  // namespace remat
