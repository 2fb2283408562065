// The checkpointing that people write by hand, read from the module structure (Node::block,
// Node::contraction): checkpoint every block, and selective recomputation (docs/design.md §6).
#pragma once

#include <cstdint>
#include <vector>

#include "core/evaluated_schedule.h"
#include "core/graph.h"
#include "core/schedule.h"

namespace remat {

// What torch.utils.checkpoint around every block keeps: every forward value outside the
// blocks, and a block's values that a node outside the block reads (its outputs, the next
// block's inputs). The rest of each block is recomputed once, in the first backward stage
// that needs it (Chen's segments).
std::vector<bool> BlockCheckpoints(const Graph& graph);

// What Megatron-style selective recomputation keeps: the outputs of contractions (matmuls,
// convolutions, attention's products) and, in a graph with blocks, what checkpoint-blocks
// keeps (the residual stream between blocks, everything outside them); the cheap operations
// between them are recomputed.
std::vector<bool> SelectiveCheckpoints(const Graph& graph);

// The schedules of those checkpoint sets. Throw InputError when the graph has no forward
// pass, or no blocks (checkpoint-blocks) or no contractions (selective).
StrategyResult CheckpointBlocks(const Graph& graph, int64_t budget_bytes);
StrategyResult SelectiveRecompute(const Graph& graph, int64_t budget_bytes);

// Checkpointing only the first N blocks in forward order, as Megatron's "block" recompute
// method does, with the fewest N that fits the budget (found by bisection: one block
// more checkpointed usually lowers the peak; whatever N is found, its schedule is simulated).
// In the other blocks `CheckpointFirstBlocks` keeps everything and
// `SelectiveAfterFirstBlocks` recomputes selectively. When no N fits, the result is N = all
// blocks (checkpoint-blocks), over the budget. Throw InputError as the baselines above do.
StrategyResult CheckpointFirstBlocks(const Graph& graph, int64_t budget_bytes);
// Selective recomputation within a budget: the contractions' outputs that `selective` keeps
// (other than what crosses a block boundary) are dropped in the order of ContractionsToDrop,
// the fewest that fit (bisection, as above); when none fits, all are dropped. In a graph with
// blocks this is done twice, the second time with the last block kept whole, and the better
// result is returned.
StrategyResult SelectiveFit(const Graph& graph, int64_t budget_bytes);
// The order: the cheapest to recompute per byte held first (cost / bytes), ties by node id, so
// that in identical blocks one kind of output goes from every block, first block first, before
// the next kind.
std::vector<int32_t> ContractionsToDrop(const Graph& graph);
// `selective` with the first `dropped` values of `order` recomputed and, with
// `last_block_whole`, every forward value of the last block (in forward order) kept.
Schedule SelectiveDropping(const Graph& graph, const std::vector<int32_t>& order, size_t dropped,
                           bool last_block_whole = false);

// Their schedule for one N (`checkpointed`, at most the number of blocks).
Schedule FirstBlocksSchedule(const Graph& graph, size_t checkpointed, bool selective_rest);
StrategyResult SelectiveAfterFirstBlocks(const Graph& graph, int64_t budget_bytes);

}  // namespace remat
