// Memory resident for a whole training step and not scheduled (docs/design.md §2): parameters, their
// gradients, optimizer state and the input batch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/model_info.h"

namespace remat {

enum class Optimizer {
  kSgd,       // no state
  kMomentum,  // one velocity per trainable parameter
  kAdam,      // first and second moments per trainable parameter
};

const char* OptimizerName(Optimizer optimizer);  // "sgd" | "momentum" | "adam"
std::optional<Optimizer> ParseOptimizer(const std::string& name);
// Extra float32 copies of the trainable parameters the optimizer keeps: 0, 1 or 2.
int32_t OptimizerStateCopies(Optimizer optimizer);

struct FixedMemory {
  int64_t parameter_bytes = 0;  // 4 * all parameters (batch-norm statistics included)
  int64_t gradient_bytes = 0;   // 4 * trainable parameters
  int64_t optimizer_bytes = 0;  // 4 * trainable parameters * OptimizerStateCopies
  int64_t input_bytes = 0;      // the input batch
  int64_t total_bytes() const {
    return parameter_bytes + gradient_bytes + optimizer_bytes + input_bytes;
  }
};

FixedMemory ComputeFixedMemory(const ModelInfo& info, Optimizer optimizer);

// The activation budget a device of `memory_bytes` leaves: memory_bytes - fixed.total_bytes().
// Zero or negative when the fixed memory alone does not fit; the caller reports that.
int64_t ActivationBudgetBytes(int64_t memory_bytes, const FixedMemory& fixed);

}  // namespace remat
