// S matrices from checkpoint sets, and the descriptions of those sets.
#include "strategies/checkpoints.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/recompute.h"

namespace remat {

StageMatrix CheckpointMatrix(const Graph& graph, const std::vector<bool>& keep,
                           bool recompute_segments) {
  const int32_t n = graph.size();
  StageMatrix S(n, n);
  auto hold = [&S](int32_t u, int32_t from, int32_t until) { S.SetRun(u, from + 1, until); };
  // Segment of each non-kept forward node (a run between kept nodes in topological order) and
  // the first backward stage that reads any node of the segment.
  std::vector<int32_t> segment(n, -1);
  std::vector<int32_t> segment_start;
  for (int32_t v : graph.forward_nodes()) {
    if (keep[v]) continue;
    if (v == 0 || keep[v - 1] || segment[v - 1] < 0) segment_start.push_back(n);
    segment[v] = static_cast<int32_t>(segment_start.size()) - 1;
    for (int32_t w : graph.succs(v)) {
      if (graph.node(w).kind == NodeKind::kBackward) {
        segment_start.back() = std::min(segment_start.back(), w);
        break;
      }
    }
  }
  for (int32_t u = 0; u < n; ++u) {
    if (graph.node(u).kind != NodeKind::kForward || keep[u]) {
      hold(u, u, graph.last_consumer(u));
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

Schedule ScheduleKeeping(const Graph& graph, const std::vector<bool>& keep) {
  return ScheduleFromCheckpoints(graph, CheckpointMatrix(graph, keep));
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
