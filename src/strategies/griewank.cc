// Binomial checkpointing mapped onto staged schedules: a checkpoint made while reversing
// position p is created in the stage that first needs p in the backward pass and held until
// its own last consumer.
#include "strategies/griewank.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/cancellation.h"
#include "core/recompute.h"
#include "strategies/checkpoints.h"

namespace remat {

BinomialTable::BinomialTable(int32_t max_steps, int32_t max_slots)
    : max_slots_(max_slots),
      advances_(static_cast<size_t>(max_steps + 1) * (max_slots + 1), 0),
      first_(advances_.size(), 0),
      split_(advances_.size(), 0),
      first_split_(advances_.size(), 0) {
  for (int32_t l = 1; l <= max_steps; ++l) {
    advances_[At(l, 0)] = first_[At(l, 0)] = int64_t{l} * (l + 1) / 2;
    for (int32_t c = 1; c <= max_slots; ++c) {
      int64_t best = std::numeric_limits<int64_t>::max();
      int64_t best_first = best;
      for (int32_t j = 1; j <= l; ++j) {
        const int64_t below = advances_[At(j - 1, c)];
        const int64_t total = j + advances_[At(l - j, c - 1)] + below;
        if (total <= best) best = total, split_[At(l, c)] = j;
        const int64_t first = first_[At(l - j, c - 1)] + below;
        if (first <= best_first) best_first = first, first_split_[At(l, c)] = j;
      }
      advances_[At(l, c)] = best;
      first_[At(l, c)] = best_first;
    }
  }
}

namespace {

// C(n, k) for n >= k, or 2^62 when it is at least 2^55: the callers only compare it with step
// counts below 2^31, and the running product C(n - k + i, i) grows with i, so saturating
// early never changes a comparison.
int64_t SaturatingBinomial(int64_t n, int64_t k) {
  constexpr int64_t kCap = int64_t{1} << 62;
  int64_t value = 1;
  for (int64_t i = 1; i <= k; ++i) {
    const int64_t factor = n - k + i;
    if (value > kCap / factor) return kCap;  // value * factor / i >= 2^62 / 65 > 2^55
    value = value * factor / i;              // exact: the result is C(n - k + i, i)
  }
  return value;
}

// The largest minimizer of a convex function on [lo, hi].
template <typename F>
int32_t LargestMinimizer(int32_t lo, int32_t hi, const F& f) {
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo + 1) / 2;
    if (f(mid) <= f(mid - 1)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

}  // namespace

int64_t BinomialCounts::Advances(int32_t steps, int32_t slots) const {
  if (steps <= 0) return 0;
  if (slots == 0) return int64_t{steps} * (steps + 1) / 2;
  // Steps 1..steps in runs of equal slope r: slope r up to C(r + c + 1, c + 1) - 1.
  int64_t total = 0, done = 0;
  for (int64_t r = 1; done < steps; ++r) {
    const int64_t end = std::min<int64_t>(steps, SaturatingBinomial(r + slots + 1, slots + 1) - 1);
    total += r * (end - done);
    done = end;  // C(r + c + 1, c + 1) grows with r
  }
  return total;
}

int64_t BinomialCounts::FirstSweepRecomputations(int32_t steps, int32_t slots) const {
  return steps <= 0 ? 0 : Advances(steps + 1, slots) - 1 - steps;
}

int32_t BinomialCounts::Split(int32_t steps, int32_t slots) const {
  return LargestMinimizer(1, steps, [&](int32_t j) {
    return j + Advances(steps - j, slots - 1) + Advances(j - 1, slots);
  });
}

int32_t BinomialCounts::FirstSweepSplit(int32_t steps, int32_t slots) const {
  return LargestMinimizer(1, steps, [&](int32_t j) {
    return FirstSweepRecomputations(steps - j, slots - 1) + Advances(j - 1, slots);
  });
}

namespace {

// With 64 slots binomial checkpointing reverses 2,145 steps with one recomputation each, so
// larger counts change little for realistic graphs while each costs one simulation.
constexpr int32_t kMaxSweptSlots = 64;
constexpr int64_t kMaxSweptRecomputations = 20'000'000;

struct Chain {
  std::vector<int32_t> node;     // forward node at each position
  std::vector<int32_t> need;     // first backward stage that reads the position's value
  std::vector<int32_t> last;     // last consumer stage of the position's value
};

Chain LinearizedChain(const Graph& graph) {
  Chain chain;
  chain.node = graph.forward_nodes();
  for (int32_t v : chain.node) {
    int32_t need = -1;
    for (int32_t w : graph.succs(v)) {
      if (graph.node(w).kind == NodeKind::kBackward) {
        need = w;
        break;
      }
    }
    chain.last.push_back(graph.last_consumer(v));
    chain.need.push_back(need >= 0 ? need : graph.last_consumer(v));
  }
  return chain;
}

// Provides the values at positions a+1 .. b-1 (x_a is stored; a = -1 is the input batch) with
// `slots` free slots; `stage` is the stage of the advance, or -1 during the first sweep.
void Reverse(const BinomialCounts& counts, const Chain& chain, int32_t a, int32_t b,
             int32_t slots, int32_t stage, StageMatrix& S) {
  const int32_t steps = b - 1 - a;
  if (steps <= 0 || slots == 0) return;
  const int32_t j = stage < 0 ? counts.FirstSweepSplit(steps, slots) : counts.Split(steps, slots);
  const int32_t m = a + j;
  const int32_t node = chain.node[m];
  const int32_t created = stage < 0 ? node : stage;
  S.SetRun(node, created + 1, chain.last[m]);
  Reverse(counts, chain, m, b, slots - 1, stage, S);
  if (m - 1 > a) Reverse(counts, chain, a, m, slots, chain.need[m - 1], S);
}

StrategyResult ScheduleWithSlots(const Graph& graph, const Chain& chain,
                                 const BinomialCounts& counts, int64_t budget_bytes,
                                 int32_t slots) {
  const int32_t f = static_cast<int32_t>(chain.node.size());
  StageMatrix S = CheckpointMatrix(graph, std::vector<bool>(graph.size(), false),
                                  /*recompute_segments=*/false);
  Reverse(counts, chain, -1, f, slots, -1, S);
  return EvaluateSchedule(graph, "griewank", ScheduleFromCheckpoints(graph, std::move(S)),
                          budget_bytes,
                          fmt::format("{} slots; binomial model: {} forward recomputations",
                                      slots, counts.FirstSweepRecomputations(f, slots)));
}

}  // namespace

StrategyResult GriewankWithSlots(const Graph& graph, int64_t budget_bytes, int32_t slots) {
  RequireTrainingStructure(graph, "griewank");
  const Chain chain = LinearizedChain(graph);
  const int32_t f = static_cast<int32_t>(chain.node.size());
  slots = std::clamp(slots, 0, f);
  return ScheduleWithSlots(graph, chain, BinomialCounts(), budget_bytes, slots);
}

StrategyResult GriewankLogN(const Graph& graph, int64_t budget_bytes) {
  RequireTrainingStructure(graph, "griewank-logn");
  const auto f = static_cast<uint32_t>(graph.forward_nodes().size());
  const int32_t slots = static_cast<int32_t>(std::bit_width(f - 1));  // ceil(log2 f)
  StrategyResult result = GriewankWithSlots(graph, budget_bytes, std::max(slots, 1));
  result.strategy = "griewank-logn";
  return result;
}

StrategyResult Griewank(const Graph& graph, int64_t budget_bytes) {
  RequireTrainingStructure(graph, "griewank");
  const Chain chain = LinearizedChain(graph);
  const int32_t f = static_cast<int32_t>(chain.node.size());
  const int32_t max_slots = std::min(f, kMaxSweptSlots);
  const BinomialCounts counts;
  std::optional<StrategyResult> best;
  bool cut_short = false;
  double slowest_s = 0;  // the longest one count's schedule took to build and simulate
  for (int32_t slots = 0; slots <= max_slots; ++slots) {
    // When the caller's deadline (core/cancellation.h) leaves less than two schedules' time,
    // the sweep jumps to the largest count, which recomputes least.
    if (best && slots < max_slots && (DeadlinePassed() || SecondsLeft() < 2 * slowest_s)) {
      slots = max_slots;
      cut_short = true;
    }
    // A schedule's plan is as long as its evaluations: few slots on a long chain recompute
    // quadratically (0 slots on 30,000 steps: 450 million), so such counts are skipped; the
    // largest count always stays (it recomputes least).
    if (slots < max_slots &&
        counts.FirstSweepRecomputations(f, slots) > kMaxSweptRecomputations) {
      continue;
    }
    const auto begin = std::chrono::steady_clock::now();
    try {
      StrategyResult result = ScheduleWithSlots(graph, chain, counts, budget_bytes, slots);
      if (!best || IsBetter(result, *best)) best = std::move(result);
    } catch (const TimeLimitReached&) {
      if (!best) throw;  // no schedule in the time: the caller says so
      cut_short = true;
      break;
    }
    slowest_s = std::max(slowest_s, std::chrono::duration<double>(
                                        std::chrono::steady_clock::now() - begin).count());
  }
  if (cut_short) best->parameters += " (time limit: slot sweep cut short)";
  return std::move(*best);
}

}  // namespace remat
