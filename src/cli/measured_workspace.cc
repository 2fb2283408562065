// Measured workspace, cached (measured_workspace.h).
#include "cli/measured_workspace.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <torch/version.h>

#include "cli/cache_entries.h"
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

// An entry's workspace was measured on this machine: no node's can exceed its memory.
void CheckMeasurable(const CostProfile& profile, const std::string& path) {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_bytes = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_bytes <= 0) return;
  const int64_t memory_bytes = static_cast<int64_t>(pages) * page_bytes;
  for (const CostProfileNode& node : profile.nodes) {
    if (node.workspace_bytes && *node.workspace_bytes > memory_bytes) {
      throw InputError(fmt::format("{}: nodes[{}].workspace_bytes is {}, more than this "
                                   "machine's memory ({} B)",
                                   path, node.id, *node.workspace_bytes, memory_bytes));
    }
  }
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
  // A cache only saves time: an unusable folder or entry is measured again, with a warning.
  auto warn = [](const std::string& what) {
    fmt::print(stderr, "remat-run: warning: {}; measuring the workspace again\n", what);
  };
  std::string why;
  const std::optional<std::string> folder =
      OwnedCacheFolder((std::filesystem::path(CacheFolder()) / "workspace").string(), why);
  std::string path;
  if (!folder) {
    warn(why + " (not used)");
  } else {
    path = (std::filesystem::path(*folder) /
            fmt::format("{}-{}.json", StructureFingerprint(graph), MachineKey(threads)))
               .string();
    if (const std::optional<std::string> text = ReadCacheEntry(path, why)) {
      try {
        const CostProfile cached = CostProfileFromJson(*text, path);
        CheckMeasurable(cached, path);
        Graph measured = ApplyProfileWorkspace(graph, cached, path);
        note = fmt::format("measured on this machine, read from {}", path);
        return measured;
      } catch (const InputError& failure) {
        why = fmt::format("the cache entry is unusable: {}", failure.what());
      }
    }
    if (!why.empty()) warn(why);
  }
  exec::Network network(model, seed);
  // Workspace needs one evaluation per node after a warm-up (oneDNN caches its primitive at
  // the first); the times of this profile are not used.
  const CostProfile profile =
      exec::ProfileGraph(network, graph, {.warmup = 1, .repeats = 1, .threads = threads});
  note = "measured on this machine now";
  if (folder) {
    try {
      WriteCacheEntry(path, CostProfileToJson(profile));
      note += fmt::format(", cached in {}", path);
    } catch (const InputError& failure) {
      note += fmt::format(" (not cached: {})", failure.what());
    }
  } else {
    note += " (not cached)";
  }
  return ApplyProfileWorkspace(graph, profile, "the measured workspace");
}

}  // namespace remat
