// Checkpoint sets from module structure: block boundaries and contractions.
#include "strategies/module_checkpoints.h"

#include <algorithm>
#include <map>
#include <optional>
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

// The blocks in the order of their first forward node.
std::vector<std::string> BlocksInOrder(const Graph& graph) {
  std::vector<std::string> blocks;
  std::set<std::string> seen;
  for (int32_t v : graph.forward_nodes()) {
    const std::string& block = graph.node(v).block;
    if (!block.empty() && seen.insert(block).second) blocks.push_back(block);
  }
  return blocks;
}

// The schedule keeping `keep`: the non-kept values of a block in `whole` form one segment per
// block; every other run of consecutive non-kept values of one block (or outside blocks) is a
// segment. A segment is recomputed once, with its kept inputs held until then.
Schedule SegmentedSchedule(const Graph& graph, const std::vector<bool>& keep,
                           const std::set<std::string>& whole) {
  std::map<std::string, int32_t> block_segment;
  std::vector<int32_t> segment(graph.size(), -1);
  int32_t segments = 0;
  for (int32_t v : graph.forward_nodes()) {
    if (keep[v]) continue;
    const std::string& block = graph.node(v).block;
    if (whole.count(block)) {
      const auto [it, added] = block_segment.emplace(block, segments);
      if (added) ++segments;
      segment[v] = it->second;
    } else if (v > 0 && segment[v - 1] >= 0 && graph.node(v - 1).block == block) {
      segment[v] = segment[v - 1];  // the run of recomputed values between kept ones goes on
    } else {
      segment[v] = segments++;
    }
  }
  return ScheduleKeeping(graph, keep, segment);
}

// The first `checkpointed` blocks recomputed whole, the rest of the forward pass kept whole
// or, with `selective_rest`, recomputed selectively.
Schedule FirstBlocksScheduleOf(const Graph& graph, const std::vector<std::string>& blocks,
                               size_t checkpointed, bool selective_rest) {
  const std::set<std::string> whole(blocks.begin(), blocks.begin() + checkpointed);
  std::vector<bool> keep = selective_rest ? SelectiveCheckpoints(graph)
                                          : std::vector<bool>(graph.size(), true);
  if (!whole.empty()) {
    const std::vector<bool> block_keep = BlockCheckpoints(graph);
    for (int32_t v : graph.forward_nodes()) {
      if (whole.count(graph.node(v).block)) keep[v] = block_keep[v];
    }
  }
  return SegmentedSchedule(graph, keep, whole);
}

// The smallest count in 0..most whose result fits, by bisection (assuming that a larger count
// never raises the peak), or the result of `most` when none fits.
template <typename Evaluate>
StrategyResult FewestThatFit(size_t most, Evaluate&& evaluate) {
  StrategyResult best = evaluate(most);
  if (best.status != FitStatus::kFits) return best;
  StrategyResult none = evaluate(0);
  if (none.status == FitStatus::kFits) return none;
  size_t fits = most, over = 0;  // a count known to fit; one known not to
  while (fits - over > 1) {
    const size_t middle = over + (fits - over) / 2;
    StrategyResult result = evaluate(middle);
    if (result.status == FitStatus::kFits) {
      fits = middle;
      best = std::move(result);
    } else {
      over = middle;
    }
  }
  return best;
}

// The fewest first blocks to checkpoint for the budget, by bisection over the count.
StrategyResult FirstBlocks(const Graph& graph, int64_t budget_bytes, const std::string& name,
                           bool selective_rest) {
  RequireStructure(graph, name, HasBlocks(graph), "blocks (a node's \"block\")");
  if (selective_rest) {
    RequireStructure(graph, name, HasContractions(graph),
                     "contractions (a node's \"contraction\": matmuls, convolutions, attention)");
  }
  const std::vector<std::string> blocks = BlocksInOrder(graph);
  auto evaluate = [&](size_t checkpointed) {
    return EvaluateSchedule(
        graph, name, FirstBlocksScheduleOf(graph, blocks, checkpointed, selective_rest),
        budget_bytes,
        fmt::format("first {} of {} blocks recomputed inside, {} in the others", checkpointed,
                    blocks.size(), selective_rest ? "selective recomputation" : "nothing"));
  };
  return FewestThatFit(blocks.size(), evaluate);
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
  const size_t kept = CountKept(SelectiveCheckpoints(graph));
  // The cheap operations between two contractions are recomputed when backward reaches them,
  // not a block at once.
  return EvaluateSchedule(graph, name, FirstBlocksScheduleOf(graph, {}, 0, true), budget_bytes,
                          fmt::format("{} values kept, {} recomputed", kept,
                                      graph.forward_nodes().size() - kept));
}

std::vector<int32_t> ContractionsToDrop(const Graph& graph) {
  const std::vector<bool> boundary = HasBlocks(graph) ? BlockCheckpoints(graph)
                                                      : std::vector<bool>(graph.size(), false);
  std::vector<int32_t> order;
  for (int32_t v : graph.forward_nodes()) {
    if (graph.node(v).contraction && !boundary[v] && graph.node(v).bytes > 0) order.push_back(v);
  }
  // Cost per byte, compared as cost_a * bytes_b < cost_b * bytes_a; ties by node id.
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return graph.node(a).cost * static_cast<double>(graph.node(b).bytes) <
           graph.node(b).cost * static_cast<double>(graph.node(a).bytes);
  });
  return order;
}

Schedule SelectiveDropping(const Graph& graph, const std::vector<int32_t>& order, size_t dropped,
                           bool last_block_whole) {
  if (dropped > order.size()) {
    throw InternalError(fmt::format("{} contractions dropped of {}", dropped, order.size()));
  }
  std::vector<bool> keep = SelectiveCheckpoints(graph);
  for (size_t k = 0; k < dropped; ++k) keep[order[k]] = false;
  const std::vector<std::string> blocks = last_block_whole ? BlocksInOrder(graph)
                                                           : std::vector<std::string>{};
  for (int32_t v : graph.forward_nodes()) {
    if (!blocks.empty() && graph.node(v).block == blocks.back()) keep[v] = true;
  }
  return SegmentedSchedule(graph, keep, {});
}

StrategyResult SelectiveFit(const Graph& graph, int64_t budget_bytes) {
  const std::string name = "selective-fit";
  RequireStructure(graph, name, HasContractions(graph),
                   "contractions (a node's \"contraction\": matmuls, convolutions, attention)");
  const std::vector<int32_t> order = ContractionsToDrop(graph);
  std::optional<StrategyResult> best;
  // The last block's backward runs first, when every kept value of the others is live:
  // recomputing its operations there holds about as much as keeping them, so keeping it whole
  // often costs no memory (both ways are tried).
  for (bool last_whole : {false, true}) {
    if (last_whole && !HasBlocks(graph)) break;
    StrategyResult result = FewestThatFit(order.size(), [&](size_t dropped) {
      return EvaluateSchedule(
          graph, name, SelectiveDropping(graph, order, dropped, last_whole), budget_bytes,
          fmt::format("{} of {} contractions' outputs recomputed, the cheapest per byte{}",
                      dropped, order.size(), last_whole ? "; the last block kept whole" : ""));
    });
    if (!best || IsBetter(result, *best)) best = std::move(result);
  }
  return std::move(*best);
}

Schedule FirstBlocksSchedule(const Graph& graph, size_t checkpointed, bool selective_rest) {
  const std::vector<std::string> blocks = BlocksInOrder(graph);
  if (checkpointed > blocks.size()) {
    throw InternalError(fmt::format("{} blocks checkpointed of {}", checkpointed, blocks.size()));
  }
  return FirstBlocksScheduleOf(graph, blocks, checkpointed, selective_rest);
}

StrategyResult CheckpointFirstBlocks(const Graph& graph, int64_t budget_bytes) {
  return FirstBlocks(graph, budget_bytes, "checkpoint-first-blocks", false);
}

StrategyResult SelectiveAfterFirstBlocks(const Graph& graph, int64_t budget_bytes) {
  return FirstBlocks(graph, budget_bytes, "selective-first-blocks", true);
}

}  // namespace remat
