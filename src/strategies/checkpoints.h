// Building schedules from a set of checkpointed forward nodes (docs/design.md §6): S from the set,
// then R by the R-from-S rule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/schedule.h"

namespace remat {

// S for a checkpoint set over forward nodes (docs/design.md §6). A kept forward node, the loss and
// every backward node stay in memory from the stage after they are computed until the stage of
// their last consumer. A forward node that is not kept stays only until its last forward (or
// loss) consumer. With `recompute_segments` (Chen's scheme), the non-kept nodes between two
// kept ones form a segment that the backward pass recomputes once, in the first stage that
// needs any of them, and then holds until each one's last consumer; without it, every stage
// recomputes what it needs (binomial checkpointing places its own checkpoints instead). In an
// unlabeled graph every node counts as kept. `keep` has one entry per node.
StageMatrix CheckpointMatrix(const Graph& graph, const std::vector<bool>& keep,
                           bool recompute_segments = true);

// The same with the segments given: `segment[v]` numbers the segment (0, 1, ...) of every
// non-kept forward node v (other entries are not read). A segment is recomputed as a whole,
// in the first backward stage that reads any of its nodes: checkpoint-blocks recomputes each
// block at once, so that a block split by kept values is never recomputed twice. A kept value
// also stays until every segment that reads it has been recomputed (a captured graph's
// backward need not read a block's input), so each segment runs once more, no more.
StageMatrix CheckpointMatrix(const Graph& graph, const std::vector<bool>& keep,
                             const std::vector<int32_t>& segment,
                             bool recompute_segments = true);

// CheckpointMatrix followed by the R-from-S rule.
Schedule ScheduleKeeping(const Graph& graph, const std::vector<bool>& keep);
Schedule ScheduleKeeping(const Graph& graph, const std::vector<bool>& keep,
                         const std::vector<int32_t>& segment);

// "checkpoints: 1 3 5 7" for the kept forward nodes, for result descriptions; a list of more
// than 12 shows the first ten, the last and the count.
std::string DescribeCheckpoints(const std::vector<bool>& keep);

}  // namespace remat
