// A budget request as a user states it (an activation budget, or device memory minus the fixed
// memory), resolved to the activation bytes every strategy plans against.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace remat {

// How messages name the request's parts: the CLI's options or Python's keyword arguments.
struct BudgetOptionNames {
  std::string budget = "--budget";
  std::string memory = "--memory";
  std::string fixed = "--fixed-memory";
  std::string device = "--device";
};

struct BudgetRequest {
  // The activation budget: bytes, units ("512MiB", "3e9") or a percentage ("60%") of the
  // graph's no-remat peak.
  std::string budget_text;
  // Device memory; the activation budget is what the fixed memory leaves of it. A percentage
  // is of the memory a no-remat step needs (its peak plus the fixed memory).
  std::string memory_text;
  // A device preset's capacity: the device memory when neither text is given.
  std::optional<int64_t> device_memory_bytes;
  // Fixed memory the model computed itself (zoo, ONNX and PyTorch models); a user's
  // `fixed_text` is then refused.
  std::optional<int64_t> model_fixed_bytes;
  // Fixed memory of a graph file, given by the user (default 0).
  std::string fixed_text;
  BudgetOptionNames names;
};

struct Budget {
  int64_t activation_bytes = 0;
  std::optional<int64_t> device_bytes;  // when derived from device memory
  int64_t fixed_bytes = 0;              // subtracted from the device memory
  std::string Describe() const;         // "1.00 GiB (1073741824 B) = device 16.00 GiB - fixed ..."
};

// A size's text ("512MiB", "3e9", "60%" of `reference_bytes`) in bytes; UsageError naming
// `option` when malformed.
int64_t ParseBytes(const std::string& text, const std::string& option, int64_t reference_bytes);

// Exactly one of the budget, the memory or the device preset must give the size (UsageError
// otherwise, naming the options). A device too small for the fixed memory is an InputError.
Budget ResolveBudget(const BudgetRequest& request, int64_t no_remat_peak_bytes);

}  // namespace remat
