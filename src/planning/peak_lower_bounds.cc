// Peak lower bounds valid for every schedule: the last-input bound and the pending-set game
// that carries its argument on (docs/solvers.md, "The smallest budget", has the proofs).
#include "planning/peak_lower_bounds.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <vector>

#include "core/cancellation.h"

namespace remat {
namespace {

using Clock = std::chrono::steady_clock;
using ValueSet = std::vector<int32_t>;  // sorted node ids

constexpr int64_t kNoBound = std::numeric_limits<int64_t>::max();
// The table of decided sets is cleared when it grows past this many entries (memory stays in
// the hundreds of megabytes at most; a cleared table only costs time).
constexpr size_t kMaxTableEntries = 500'000;

struct SetHash {
  size_t operator()(const ValueSet& set) const {
    uint64_t h = 1469598103934665603ull;
    for (const int32_t id : set) h = (h ^ static_cast<uint32_t>(id)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

// What earlier searches decided about a pending set: its game value is at least `proven`, and
// at depth `failed_depth` it is below `failed_below` (which says the same for shallower depths).
struct Decided {
  int64_t proven = 0;
  int32_t failed_depth = -1;
  int64_t failed_below = kNoBound;
};

class PendingSetGame {
 public:
  PendingSetGame(const Graph& graph, double time_limit_s)
      : graph_(graph), deadline_(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                    std::chrono::duration<double>(time_limit_s))) {}

  bool timed_out() const { return timed_out_; }
  // Whether some search stopped at the depth limit (a deeper one may prove more).
  bool cut_by_depth() const { return cut_by_depth_; }
  void ResetDepthFlag() { cut_by_depth_ = false; }

  int64_t Bytes(const ValueSet& set) const {
    int64_t bytes = 0;
    for (const int32_t id : set) bytes += graph_.node(id).bytes;
    return bytes;
  }

  // A lower bound on the game value of `set` (its bytes `set_bytes`) within `depth` steps: at
  // least `alpha` when the value is; otherwise some value below `alpha` (then the value within
  // `depth` steps is below `alpha`).
  int64_t Eval(const ValueSet& set, int64_t set_bytes, int32_t depth, int64_t alpha) {
    // The set itself is live at its last computation; an empty one ends the game.
    if (set_bytes >= alpha || set.empty()) return set_bytes;
    if (depth == 0) {
      cut_by_depth_ = true;
      return set_bytes;
    }
    if (timed_out_ || ((++calls_ & 1023) == 0 && OutOfTime())) return set_bytes;
    Decided& known = table_[set];
    if (known.proven >= alpha) return known.proven;
    if (known.failed_depth >= depth && alpha >= known.failed_below) return set_bytes;

    // Each member w as the last computed: the memory while it runs, and the pending set after.
    struct Step {
      int32_t member;
      int64_t running_bytes;  // the set, w's inputs and w's workspace
      int64_t next_bytes;     // the set without w, with w's inputs
    };
    std::vector<Step> steps;
    steps.reserve(set.size());
    for (const int32_t w : set) {
      int64_t added = 0;
      for (const int32_t u : graph_.preds(w)) {
        if (!std::binary_search(set.begin(), set.end(), u)) added += graph_.node(u).bytes;
      }
      steps.push_back({w, set_bytes + added + graph_.node(w).workspace_bytes,
                       set_bytes - graph_.node(w).bytes + added});
    }
    // The schedule's likeliest choices first, so that a refutation cuts the search early.
    std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) {
      return a.running_bytes != b.running_bytes ? a.running_bytes < b.running_bytes
                                                : a.next_bytes < b.next_bytes;
    });
    int64_t least = kNoBound;
    for (const Step& step : steps) {
      int64_t value = step.running_bytes;
      if (value < alpha) {
        const ValueSet next = Expand(set, step.member);
        const int64_t rest = Eval(next, step.next_bytes, depth - 1, alpha);
        if (rest < alpha || timed_out_) {
          if (!timed_out_) Fail(set, depth, alpha);
          return set_bytes;
        }
        value = std::max(value, rest);
      }
      least = std::min(least, value);
    }
    Prove(set, least);
    return least;
  }

 private:
  bool OutOfTime() {
    if (CancelRequested() || Clock::now() >= deadline_) timed_out_ = true;
    return timed_out_;
  }

  ValueSet Expand(const ValueSet& set, int32_t member) const {
    ValueSet next;
    next.reserve(set.size() + graph_.preds(member).size());
    for (const int32_t id : set) {
      if (id != member) next.push_back(id);
    }
    for (const int32_t u : graph_.preds(member)) next.push_back(u);
    std::sort(next.begin(), next.end());
    next.erase(std::unique(next.begin(), next.end()), next.end());
    return next;
  }

  void Prove(const ValueSet& set, int64_t value) {
    if (table_.size() > kMaxTableEntries) table_.clear();
    Decided& known = table_[set];
    known.proven = std::max(known.proven, value);
  }

  void Fail(const ValueSet& set, int32_t depth, int64_t alpha) {
    if (table_.size() > kMaxTableEntries) table_.clear();
    Decided& known = table_[set];
    if (depth > known.failed_depth || (depth == known.failed_depth && alpha < known.failed_below)) {
      known.failed_depth = depth;
      known.failed_below = alpha;
    }
  }

  const Graph& graph_;
  const Clock::time_point deadline_;
  std::unordered_map<ValueSet, Decided, SetHash> table_;
  uint64_t calls_ = 0;
  bool timed_out_ = false;
  bool cut_by_depth_ = false;
};

}  // namespace

int64_t LastInputPeakLowerBound(const Graph& graph) {
  int64_t bound = MinimumPeakLowerBound(graph);
  std::vector<int32_t> seen(static_cast<size_t>(graph.size()), -1);  // last (v, u) pair counted
  int32_t mark = 0;
  for (int32_t v = 0; v < graph.size(); ++v) {
    const std::vector<int32_t>& inputs = graph.preds(v);
    if (inputs.empty()) continue;
    int64_t least = std::numeric_limits<int64_t>::max();
    for (const int32_t u : inputs) {
      // Distinct values live while u is computed: v's inputs, u's inputs (u among the former).
      ++mark;
      int64_t live = graph.node(u).workspace_bytes;
      auto count = [&](int32_t value) {
        if (seen[static_cast<size_t>(value)] == mark) return;
        seen[static_cast<size_t>(value)] = mark;
        live += graph.node(value).bytes;
      };
      for (const int32_t w : inputs) count(w);
      for (const int32_t w : graph.preds(u)) count(w);
      least = std::min(least, live);
    }
    bound = std::max(bound, least);
  }
  return bound;
}

PendingSetBound PendingSetPeakLowerBound(const Graph& graph,
                                         const PendingSetBoundOptions& options) {
  PendingSetBound result{.bytes = MinimumPeakLowerBound(graph)};
  PendingSetGame game(graph, options.time_limit_s);
  // The inputs of every node are pending when it runs; the most promising starts go first, so
  // that the bound rises early and cuts the other searches.
  struct Start {
    ValueSet inputs;
    int64_t inputs_bytes;
    int64_t value;  // the best lower bound proven from this start so far
  };
  std::vector<Start> starts;
  for (int32_t v = 0; v < graph.size(); ++v) {
    if (graph.preds(v).empty()) continue;
    ValueSet inputs = graph.preds(v);
    std::sort(inputs.begin(), inputs.end());
    const int64_t bytes = game.Bytes(inputs);
    starts.push_back({std::move(inputs), bytes, bytes});
  }
  for (int32_t depth = 1; depth <= options.max_depth; ++depth) {
    std::stable_sort(starts.begin(), starts.end(),
                     [](const Start& a, const Start& b) { return a.value > b.value; });
    game.ResetDepthFlag();
    for (Start& start : starts) {
      const int64_t value = game.Eval(start.inputs, start.inputs_bytes, depth, result.bytes + 1);
      if (game.timed_out()) break;
      start.value = std::max(start.value, value);
      result.bytes = std::max(result.bytes, value);
    }
    if (game.timed_out()) {
      result.timed_out = true;
      break;
    }
    result.depth = depth;
    if (!game.cut_by_depth()) break;  // every line of play ended: deeper proves nothing more
  }
  return result;
}

}  // namespace remat
