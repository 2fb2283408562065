// Resolving a budget request: parse the sizes, subtract the fixed memory from device memory.
#include "planning/budget.h"

#include <stdexcept>

#include <fmt/format.h>

#include "core/errors.h"
#include "core/sizes.h"
#include "planning/size_parsing.h"

namespace remat {

int64_t ParseBytes(const std::string& text, const std::string& option, int64_t reference_bytes) {
  try {
    return ResolveSize(ParseSize(text), reference_bytes);
  } catch (const std::invalid_argument& error) {
    throw UsageError(fmt::format("{}: {}", option, error.what()));
  }
}

std::string Budget::Describe() const {
  // The exact count beside the rounded size, for a --budget that reproduces it (not twice).
  const std::string size = activation_bytes < 1024
                               ? FormatBytes(activation_bytes)
                               : fmt::format("{} ({} B)", FormatBytes(activation_bytes),
                                             activation_bytes);
  if (!device_bytes) return size;
  return fmt::format("{} = device {} - fixed {}", size, FormatBytes(*device_bytes),
                     FormatBytes(fixed_bytes));
}

Budget ResolveBudget(const BudgetRequest& request, int64_t no_remat_peak_bytes) {
  const BudgetOptionNames& names = request.names;
  const bool has_budget = !request.budget_text.empty();
  const bool has_memory = !request.memory_text.empty();
  if (has_budget && has_memory) {
    throw UsageError(fmt::format("give either {} or {}, not both", names.budget, names.memory));
  }
  Budget budget;
  if (has_budget) {
    budget.activation_bytes = ParseBytes(request.budget_text, names.budget, no_remat_peak_bytes);
    return budget;
  }
  if (request.model_fixed_bytes) {
    if (!request.fixed_text.empty()) {
      throw UsageError(fmt::format("{} is for graph files; zoo, ONNX and PyTorch models compute "
                                   "their own",
                                   names.fixed));
    }
    budget.fixed_bytes = *request.model_fixed_bytes;
  } else if (!request.fixed_text.empty()) {
    budget.fixed_bytes = ParseBytes(request.fixed_text, names.fixed, no_remat_peak_bytes);
  }
  int64_t device_bytes = 0;
  if (has_memory) {
    device_bytes =
        ParseBytes(request.memory_text, names.memory, no_remat_peak_bytes + budget.fixed_bytes);
  } else if (request.device_memory_bytes) {
    device_bytes = *request.device_memory_bytes;
  } else {
    throw UsageError(fmt::format("give the memory limit with {} SIZE, {} SIZE or {} NAME",
                                 names.budget, names.memory, names.device));
  }
  budget.device_bytes = device_bytes;
  budget.activation_bytes = device_bytes - budget.fixed_bytes;
  if (budget.activation_bytes <= 0) {
    throw InfeasibleBudgetError(fmt::format("the fixed memory {} ({} B) alone exceeds the device memory {} "
                                 "({} B): no activation budget is left",
                                 FormatBytes(budget.fixed_bytes), budget.fixed_bytes,
                                 FormatBytes(device_bytes), device_bytes));
  }
  return budget;
}

}  // namespace remat
