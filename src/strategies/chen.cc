// Chen's sqrt(n) and greedy checkpoint selection (docs/design.md §6, paper appendix B).
#include "strategies/chen.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/cancellation.h"
#include "core/sizes.h"
#include "strategies/articulation.h"
#include "strategies/checkpoints.h"

namespace remat {
namespace {

constexpr int kGreedyGridPoints = 96;  // segment budgets tried by the greedy sweep

std::vector<int32_t> Candidates(const Graph& graph, CandidateSet candidates) {
  return candidates == CandidateSet::kLinearized ? graph.forward_nodes()
                                                 : ForwardArticulationPoints(graph);
}

const char* Suffix(CandidateSet candidates) {
  return candidates == CandidateSet::kLinearized ? "linear" : "ap";
}

// The sqrt(n) rule's spacing as a sentence.
std::string DescribeSpacing(size_t segment, size_t candidates) {
  if (candidates == 0) return "no candidate nodes";
  if (segment == 1) return fmt::format("all {} candidate nodes kept", candidates);
  return fmt::format("one in {} of the {} candidate nodes kept", segment, candidates);
}

}  // namespace

StrategyResult ChenSqrtN(const Graph& graph, int64_t budget_bytes, CandidateSet candidates) {
  const std::string name = fmt::format("chen-sqrtn-{}", Suffix(candidates));
  RequireTrainingStructure(graph, name);
  const std::vector<int32_t> points = Candidates(graph, candidates);
  std::vector<bool> keep(graph.size(), false);
  const size_t segment = std::max<size_t>(1, static_cast<size_t>(std::sqrt(points.size())));
  for (size_t k = segment - 1; k < points.size(); k += segment) keep[points[k]] = true;
  return EvaluateSchedule(graph, name, ScheduleKeeping(graph, keep), budget_bytes,
                          fmt::format("{}; {}", DescribeSpacing(segment, points.size()),
                                      DescribeCheckpoints(keep)));
}

std::vector<bool> ChenGreedyCheckpoints(const Graph& graph, double segment_bytes,
                                        CandidateSet candidates) {
  std::vector<bool> is_candidate(graph.size(), false);
  for (int32_t v : Candidates(graph, candidates)) is_candidate[v] = true;
  std::vector<bool> keep(graph.size(), false);
  double running = 0;
  for (int32_t v : graph.forward_nodes()) {
    running += static_cast<double>(graph.node(v).bytes);
    if (running > segment_bytes && is_candidate[v]) {
      keep[v] = true;
      running = 0;
    }
  }
  return keep;
}

StrategyResult ChenGreedy(const Graph& graph, int64_t budget_bytes, CandidateSet candidates) {
  const std::string name = fmt::format("chen-greedy-{}", Suffix(candidates));
  RequireTrainingStructure(graph, name);
  int64_t smallest = -1;
  int64_t total = 0;
  for (int32_t v : graph.forward_nodes()) {
    const int64_t bytes = graph.node(v).bytes;
    total += bytes;
    if (bytes > 0 && (smallest < 0 || bytes < smallest)) smallest = bytes;
  }
  std::vector<double> grid{0.0};
  if (smallest > 0) {
    const double ratio = std::pow(static_cast<double>(total) / static_cast<double>(smallest),
                                  1.0 / (kGreedyGridPoints - 1));
    for (int k = 0; k < kGreedyGridPoints; ++k) {
      grid.push_back(static_cast<double>(smallest) * std::pow(ratio, k));
    }
  }
  std::set<std::vector<bool>> tried;
  std::optional<StrategyResult> best;
  for (double segment_bytes : grid) {
    if (best && DeadlinePassed()) {  // the caller's time limit (DeadlineScope)
      best->parameters += " (time limit: segment sweep cut short)";
      break;
    }
    std::vector<bool> keep = ChenGreedyCheckpoints(graph, segment_bytes, candidates);
    if (!tried.insert(keep).second) continue;
    try {
      StrategyResult result = EvaluateSchedule(
          graph, name, ScheduleKeeping(graph, keep), budget_bytes,
          fmt::format("segments of up to {}; {}",
                      FormatBytes(static_cast<int64_t>(std::llround(segment_bytes))),
                      DescribeCheckpoints(keep)));
      if (!best || IsBetter(result, *best)) best = std::move(result);
    } catch (const TimeLimitReached&) {
      if (!best) throw;  // no schedule in the time: the caller says so
      best->parameters += " (time limit: segment sweep cut short)";
      break;
    }
  }
  return std::move(*best);
}

}  // namespace remat
