// Fixed memory of a training step and the activation budget it leaves on a device.
#include "model/fixed_memory.h"

namespace remat {

const char* OptimizerName(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kSgd: return "sgd";
    case Optimizer::kMomentum: return "momentum";
    case Optimizer::kAdam: return "adam";
  }
  return "?";
}

std::optional<Optimizer> ParseOptimizer(const std::string& name) {
  for (Optimizer optimizer : {Optimizer::kSgd, Optimizer::kMomentum, Optimizer::kAdam}) {
    if (name == OptimizerName(optimizer)) return optimizer;
  }
  return std::nullopt;
}

int32_t OptimizerStateCopies(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kSgd: return 0;
    case Optimizer::kMomentum: return 1;
    case Optimizer::kAdam: return 2;
  }
  return 0;
}

FixedMemory ComputeFixedMemory(const ModelInfo& info, Optimizer optimizer) {
  const int64_t trainable_bytes = info.trainable_parameters * kElementBytes;
  return {.parameter_bytes = info.parameters * kElementBytes,
          .gradient_bytes = trainable_bytes,
          .optimizer_bytes = trainable_bytes * OptimizerStateCopies(optimizer),
          .input_bytes = info.input_bytes};
}

int64_t ActivationBudgetBytes(int64_t memory_bytes, const FixedMemory& fixed) {
  return memory_bytes - fixed.total_bytes();
}

}  // namespace remat
