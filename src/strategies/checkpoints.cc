// S matrices from checkpoint sets, and the descriptions of those sets.
#include "strategies/checkpoints.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.h"
#include "core/recompute.h"

namespace remat {
namespace {

// CheckpointMatrix's work. With `hold_inputs_of_segments`, a kept value stays until every
// segment that reads it has been recomputed; without, such a value is recomputed for the
// segment when it is gone (Chen's schedules: a lower peak at a higher cost).
StageMatrix SegmentMatrix(const Graph& graph, const std::vector<bool>& keep,
                          const std::vector<int32_t>& segment, bool recompute_segments,
                          bool hold_inputs_of_segments) {
  const int32_t n = graph.size();
  StageMatrix S(n, n);
  auto hold = [&S](int32_t u, int32_t from, int32_t until) { S.SetRun(u, from + 1, until); };
  // The first backward stage that reads any node of each segment.
  const int32_t segments =
      1 + (segment.empty() ? -1 : *std::max_element(segment.begin(), segment.end()));
  std::vector<int32_t> segment_start(std::max(segments, 0), n);
  for (int32_t v : graph.forward_nodes()) {
    if (keep[v]) continue;
    if (segment[v] < 0) {
      throw InternalError(fmt::format("forward node {} is not kept but has no segment", v));
    }
    for (int32_t w : graph.succs(v)) {
      if (graph.node(w).kind == NodeKind::kBackward) {
        segment_start[segment[v]] = std::min(segment_start[segment[v]], w);
        break;
      }
    }
  }
  for (int32_t u = 0; u < n; ++u) {
    if (graph.node(u).kind != NodeKind::kForward || keep[u]) {
      // A kept value stays until a segment that reads it has been recomputed too: in a
      // captured graph the backward pass need not read a block's input itself.
      int32_t until = graph.last_consumer(u);
      for (int32_t w : graph.succs(u)) {
        if (hold_inputs_of_segments && recompute_segments &&
            graph.node(w).kind == NodeKind::kForward && !keep[w] &&
            segment_start[segment[w]] < n) {
          until = std::max(until, segment_start[segment[w]]);
        }
      }
      hold(u, u, until);
      continue;
    }
    int32_t last_forward_use = -1;
    for (int32_t v : graph.succs(u)) {
      const NodeKind kind = graph.node(v).kind;
      if (kind == NodeKind::kForward || kind == NodeKind::kLoss) last_forward_use = v;
    }
    hold(u, u, last_forward_use);
    if (recompute_segments && segment_start[segment[u]] < n) {
      hold(u, segment_start[segment[u]], graph.last_consumer(u));
    }
  }
  return S;
}

}  // namespace

StageMatrix CheckpointMatrix(const Graph& graph, const std::vector<bool>& keep,
                           bool recompute_segments) {
  // Segments: the runs of non-kept forward nodes between kept ones in topological order.
  std::vector<int32_t> segment(graph.size(), -1);
  int32_t count = 0;
  for (int32_t v : graph.forward_nodes()) {
    if (keep[v]) continue;
    if (v == 0 || keep[v - 1] || segment[v - 1] < 0) ++count;
    segment[v] = count - 1;
  }
  return SegmentMatrix(graph, keep, segment, recompute_segments, false);
}

StageMatrix CheckpointMatrix(const Graph& graph, const std::vector<bool>& keep,
                             const std::vector<int32_t>& segment, bool recompute_segments) {
  return SegmentMatrix(graph, keep, segment, recompute_segments, true);
}

Schedule ScheduleKeeping(const Graph& graph, const std::vector<bool>& keep) {
  return ScheduleFromCheckpoints(graph, CheckpointMatrix(graph, keep));
}

Schedule ScheduleKeeping(const Graph& graph, const std::vector<bool>& keep,
                         const std::vector<int32_t>& segment) {
  return ScheduleFromCheckpoints(graph, CheckpointMatrix(graph, keep, segment));
}

std::string DescribeCheckpoints(const std::vector<bool>& keep) {
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < static_cast<int32_t>(keep.size()); ++id) {
    if (keep[id]) ids.push_back(id);
  }
  if (ids.empty()) return "no checkpoints";
  // A long list would fill a table row: the first ten, the last, and the count.
  constexpr size_t kShown = 10;
  if (ids.size() <= kShown + 2) return fmt::format("checkpoints: {}", fmt::join(ids, " "));
  return fmt::format("checkpoints: {} ... {} ({} in all)",
                     fmt::join(ids.begin(), ids.begin() + kShown, " "), ids.back(), ids.size());
}

}  // namespace remat
