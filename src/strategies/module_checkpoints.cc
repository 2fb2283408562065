// Checkpoint sets from module structure: block boundaries and contractions.
#include "strategies/module_checkpoints.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

#include "core/errors.h"
#include "strategies/checkpoints.h"

namespace remat {
namespace {

void RequireStructure(const Graph& graph, const std::string& name, bool present,
                      const std::string& what) {
  RequireTrainingStructure(graph, name);
  if (present) return;
  throw InputError(fmt::format("{} needs {}, and no forward node of this graph has any ({})",
                               name, what, "docs/formats.md, \"Module structure\""));
}

// One segment per block: a block's values that are not kept are recomputed together, once
// (checkpoint-blocks keeps every node outside blocks).
std::vector<int32_t> BlockSegments(const Graph& graph, const std::vector<bool>& keep) {
  std::map<std::string, int32_t> index;
  std::vector<int32_t> segment(graph.size(), -1);
  for (int32_t v : graph.forward_nodes()) {
    if (keep[v]) continue;
    segment[v] =
        index.emplace(graph.node(v).block, static_cast<int32_t>(index.size())).first->second;
  }
  return segment;
}

size_t CountKept(const std::vector<bool>& keep) {
  return static_cast<size_t>(std::count(keep.begin(), keep.end(), true));
}

}  // namespace

std::vector<bool> BlockCheckpoints(const Graph& graph) {
  std::vector<bool> keep(graph.size(), false);
  for (int32_t v : graph.forward_nodes()) {
    const std::string& block = graph.node(v).block;
    if (block.empty()) {
      keep[v] = true;
      continue;
    }
    for (int32_t w : graph.succs(v)) {
      // Backward readers do not count: only a forward (or loss) reader outside the block.
      if (graph.node(w).kind != NodeKind::kBackward && graph.node(w).block != block) {
        keep[v] = true;
        break;
      }
    }
  }
  return keep;
}

std::vector<bool> SelectiveCheckpoints(const Graph& graph) {
  std::vector<bool> keep = HasBlocks(graph) ? BlockCheckpoints(graph)
                                            : std::vector<bool>(graph.size(), false);
  for (int32_t v : graph.forward_nodes()) {
    if (graph.node(v).contraction) keep[v] = true;
  }
  return keep;
}

StrategyResult CheckpointBlocks(const Graph& graph, int64_t budget_bytes) {
  const std::string name = "checkpoint-blocks";
  RequireStructure(graph, name, HasBlocks(graph), "blocks (a node's \"block\")");
  const std::vector<bool> keep = BlockCheckpoints(graph);
  std::set<std::string> blocks;
  for (const Node& node : graph.nodes()) {
    if (!node.block.empty()) blocks.insert(node.block);
  }
  return EvaluateSchedule(graph, name, ScheduleKeeping(graph, keep, BlockSegments(graph, keep)),
                          budget_bytes,
                          fmt::format("{} blocks recomputed inside; {} values kept", blocks.size(),
                                      CountKept(keep)));
}

StrategyResult SelectiveRecompute(const Graph& graph, int64_t budget_bytes) {
  const std::string name = "selective";
  RequireStructure(graph, name, HasContractions(graph),
                   "contractions (a node's \"contraction\": matmuls, convolutions, attention)");
  const std::vector<bool> keep = SelectiveCheckpoints(graph);
  const size_t kept = CountKept(keep);
  // Chen's segments (runs of consecutive values between kept ones): the cheap operations
  // between two contractions are recomputed when backward reaches them, not a block at once.
  return EvaluateSchedule(graph, name, ScheduleKeeping(graph, keep), budget_bytes,
                          fmt::format("{} values kept, {} recomputed", kept,
                                      graph.forward_nodes().size() - kept));
}

}  // namespace remat
