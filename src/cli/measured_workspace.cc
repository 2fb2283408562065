// Measured workspace, cached (measured_workspace.h).
#include "cli/measured_workspace.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <fmt/format.h>
#include <torch/version.h>

#include "core/cost_profile.h"
#include "core/errors.h"
#include "exec/network.h"
#include "exec/profiler.h"

namespace remat {
namespace {

// What the kernels' allocations depend on beside the graph: the CPU (its model and ISA flags
// choose oneDNN's blocking), libtorch's version and the thread count.
std::string MachineKey(int32_t threads) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(cpuinfo, line) && (model.empty() || flags.empty())) {
    if (model.empty() && line.rfind("model name", 0) == 0) model = line;
    if (flags.empty() && line.rfind("flags", 0) == 0) flags = line;
  }
  const size_t hash = std::hash<std::string>{}(model + "\n" + flags + "\n" + TORCH_VERSION);
  return fmt::format("{:016x}-t{}", hash, threads);
}

}  // namespace

std::string CacheFolder() {
  if (const char* dir = std::getenv("REMAT_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return (std::filesystem::path(xdg) / "remat").string();
  }
  const char* home = std::getenv("HOME");
  return (std::filesystem::path(home != nullptr ? home : ".") / ".cache" / "remat").string();
}

Graph WithMeasuredWorkspace(const Graph& graph, const ModelInfo& model, uint64_t seed,
                            int32_t threads, std::string& note) {
  const std::filesystem::path folder = std::filesystem::path(CacheFolder()) / "workspace";
  const std::filesystem::path path =
      folder / fmt::format("{}-{}.json", StructureFingerprint(graph), MachineKey(threads));
  std::error_code error;
  if (std::filesystem::is_regular_file(path, error)) {
    note = fmt::format("measured on this machine, read from {}", path.string());
    return ApplyProfileWorkspace(graph, LoadCostProfile(path.string()), path.string());
  }
  exec::Network network(model, seed);
  // Workspace needs one evaluation per node after a warm-up (oneDNN caches its primitives at
  // the first); the times of this profile are not used.
  const CostProfile profile =
      exec::ProfileGraph(network, graph, {.warmup = 1, .repeats = 1, .threads = threads});
  std::filesystem::create_directories(folder, error);
  note = "measured on this machine now";
  if (!error) {
    try {
      SaveCostProfile(profile, path.string());
      note += fmt::format(", cached in {}", path.string());
    } catch (const InputError& failure) {
      note += fmt::format(" (not cached: {})", failure.what());
    }
  } else {
    note += fmt::format(" (not cached: cannot create {}: {})", folder.string(), error.message());
  }
  return ApplyProfileWorkspace(graph, profile, "the measured workspace");
}

}  // namespace remat
