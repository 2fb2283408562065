// remat-run --measured-workspace: each node's workspace measured on this machine before
// planning (the counting allocator's peak above the node's output, as `remat-run profile`
// measures it), cached per graph structure, machine and thread count, so that later runs plan
// with it at once. The zoo's workspace rules were fitted on one CPU at 224x224; oneDNN's and
// ATen's kernels allocate differently at small shapes and on other ISAs (docs/exec.md).
#pragma once

#include <cstdint>
#include <string>

#include "core/graph.h"
#include "model/model_info.h"

namespace remat {

inline constexpr const char* kMeasuredWorkspaceHelp =
    "measure each node's workspace on this machine before planning, instead of the zoo's "
    "estimates (cached in $REMAT_CACHE_DIR, default ~/.cache/remat; docs/exec.md)";

// The folder of remat-run's caches: $REMAT_CACHE_DIR, else $XDG_CACHE_HOME/remat, else
// $HOME/.cache/remat.
std::string CacheFolder();

// `graph` with every node's workspace replaced by the one measured on this machine at
// `threads` ATen threads: read from the cache when it has this graph's, measured (and cached)
// otherwise. `note` says which, for the report.
Graph WithMeasuredWorkspace(const Graph& graph, const ModelInfo& model, uint64_t seed,
                            int32_t threads, std::string& note);

}  // namespace remat
