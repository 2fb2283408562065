// Eviction over the stage peaks. A value's "uses" are the stages that must see it
// present: its own, its readers', and those where an evicted consumer is recomputed from it.
// Evicting u across stage k empties S for u between the last use before k and the first use
// after it (b); R-from-S then recomputes u at b. Every input of u is made to be held into b,
// so the recomputation costs exactly cost(u) when it is planned, and nothing cascades.
#include "strategies/eviction.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/cancellation.h"
#include "core/plan.h"
#include "core/recompute.h"
#include "core/simulator.h"
#include "strategies/checkpoints.h"
#include "strategies/incremental_schedule.h"

namespace remat {
namespace {

using Clock = std::chrono::steady_clock;

struct Candidate {
  int32_t value = -1;
  int32_t from = 0;         // last use before the stage: S is emptied on (from, to]
  int32_t to = 0;           // next use, where the value is recomputed
  int64_t freed_bytes = 0;  // bytes removed from the fullest stage
  double cost = 0;          // the recomputation at `to`: the value and inputs recomputed with it
  double score = 0;
  std::vector<int32_t> pins;        // inputs to hold into `to` from their last presence
  std::vector<int32_t> recomputed;  // inputs recomputed at `to` with the value
};

// Every value kept until its last use, priced stage by stage: where every pass starts (made
// once for all passes: on a 200,001-node chain it costs as much as a few evictions).
IncrementalSchedule KeepEverything(const Graph& graph, int64_t budget_bytes) {
  return IncrementalSchedule(
      graph, ScheduleKeeping(graph, std::vector<bool>(graph.size(), true)).S, budget_bytes);
}

class EvictionPass {
 public:
  EvictionPass(const Graph& graph, int64_t budget_bytes, EvictionScore score, int32_t depth,
               Clock::time_point deadline)
      : g_(graph), n_(graph.size()), budget_(budget_bytes), score_(score), depth_(depth),
        deadline_(deadline),
        uses_(n_) {}

  // Returns the final schedule and the number of evictions. Candidates are priced stage by
  // stage (IncrementalSchedule); the final schedule is rebuilt and simulated, and must agree.
  std::pair<Schedule, int32_t> Run(IncrementalSchedule state) {
    // Every stage that computes a value uses it and its inputs (from everything kept: its own
    // stage and its readers'; from a known schedule, its recomputations too).
    for (int32_t k = 0; k < n_; ++k) {
      for (int32_t v : state.computed()[k]) {
        uses_[v].insert(k);
        for (int32_t p : g_.preds(v)) uses_[p].insert(k);
      }
    }
    int64_t excess = Excess(state.peak_bytes(), state.excess_bytes());
    int32_t evictions = 0;
    int64_t best_peak = state.peak_bytes();
    int32_t stalled = 0;  // evictions since the peak last fell
    while (excess > 0 && !TimeUp() && stalled < kMaxStalled) {
      // Each candidate is priced; the one that removes the most overflow per unit of added
      // cost wins (the rule's score only ranks them). The peak allocation comes first; when
      // nothing there helps, all its candidates, then the peaks of other overflowing stages.
      struct Trial {
        std::vector<HoldEdit> edits;
        int64_t excess;
        double ratio;
        Candidate candidate;
      };
      std::optional<Trial> best;
      for (int32_t k : PeakStages(state)) {
        const IncrementalSchedule::AllocationPeak peak = state.PeakAllocation(k);
        std::vector<Candidate> candidates = Candidates(state, k, peak);
        std::stable_sort(candidates.begin(), candidates.end(),
                         [](const Candidate& x, const Candidate& y) { return x.score < y.score; });
        for (size_t c = 0; c < std::min(candidates.size(), kMaxTrials); ++c) {
          if (best && c >= kTrials) break;
          if (TimeUp()) break;
          std::vector<HoldEdit> edits = Edits(state, candidates[c]);
          const IncrementalSchedule::Outcome trial = state.Evaluate(edits);
          const int64_t trial_excess = Excess(trial.peak_bytes, trial.excess_bytes);
          // Progress: a lower peak, or the same peak with less overflow elsewhere.
          if (trial.peak_bytes > state.peak_bytes() ||
              (trial.peak_bytes == state.peak_bytes() && trial_excess >= excess)) {
            continue;
          }
          const double ratio = std::max(0.0, trial.cost - state.cost()) /
                               static_cast<double>(std::max<int64_t>(
                                   state.peak_bytes() - trial.peak_bytes, excess - trial_excess));
          if (!best || ratio < best->ratio) {
            best = Trial{std::move(edits), trial_excess, ratio, candidates[c]};
          }
        }
        if (best) break;
      }
      if (!best) break;  // nothing live at the peak can go without making things worse
      state.Evaluate(best->edits);
      state.Commit();
      Commit(best->candidate);
      excess = best->excess;
      ++evictions;
      stalled = state.peak_bytes() < best_peak ? 0 : stalled + 1;
      best_peak = std::min(best_peak, state.peak_bytes());
    }
    return {state.Verify(), evictions};
  }

 private:
  static constexpr size_t kTrials = 8;      // candidates simulated per eviction
  static constexpr size_t kMaxTrials = 48;  // when none of the first kTrials helps
  static constexpr size_t kMaxStages = 6;   // overflowing stages looked at per eviction
  // Give up after this many evictions without a lower peak: they only trade overflow between
  // stages, and a pass that cannot fit should leave time to the others.
  static constexpr int32_t kMaxStalled = 40;

  bool TimeUp() const { return Clock::now() >= deadline_ || DeadlinePassed(); }

  // The overflowing stages by their fullest allocation, fullest first (kMaxStages of them).
  std::vector<int32_t> PeakStages(const IncrementalSchedule& state) const {
    std::vector<int32_t> stages;
    for (int32_t k = 0; k < n_; ++k) {
      if (state.allocation_peak_bytes(k) > budget_) stages.push_back(k);
    }
    std::stable_sort(stages.begin(), stages.end(), [&](int32_t a, int32_t b) {
      return state.allocation_peak_bytes(a) > state.allocation_peak_bytes(b);
    });
    if (stages.size() > kMaxStages) stages.resize(kMaxStages);
    return stages;
  }

  // Bytes over the budget, summed over stages (0 when the schedule fits).
  int64_t Excess(int64_t peak_bytes, int64_t excess_bytes) const {
    return std::max<int64_t>(excess_bytes, peak_bytes > budget_ ? 1 : 0);
  }

  // At the first allocation that reaches the peak (node i in stage k): values live there only
  // because they are held into stage k+1, their reads in stage k (if any) being over.
  std::vector<Candidate> Candidates(const IncrementalSchedule& s, int32_t k,
                                    const IncrementalSchedule::AllocationPeak& peak) const {
    const int32_t i = peak.node;
    std::vector<Candidate> out;
    if (k + 1 >= n_) return out;
    std::vector<char> live(n_, 0);
    for (int32_t v : peak.live) live[v] = 1;
    std::vector<int32_t> last_read(n_, -1);
    for (int32_t v : s.computed()[k]) {
      for (int32_t u : g_.preds(v)) last_read[u] = v;
    }
    // Inputs already planned for the candidate being built: set for each input put in its
    // pins or recomputed, and cleared from those lists after it, so that one array serves
    // every candidate (one per candidate made a 200,001-node chain quadratic).
    std::vector<char> planned(n_, 0);
    auto consider = [&](Candidate c) {
      for (int32_t p : c.pins) planned[p] = 0;
      for (int32_t p : c.recomputed) planned[p] = 0;
      if (c.freed_bytes <= 0) return;
      c.score = Score(c);
      out.push_back(std::move(c));
    };
    for (size_t j = 0; j < peak.live.size(); ++j) {
      if (j % 4096 == 4095 && TimeUp()) break;  // the caller returns what it has
      const int32_t u = peak.live[j];
      if (u == i) continue;
      if (s.S().Get(k + 1, u) && last_read[u] < i) {
        // Held into k+1 but done in stage k: stop holding it until its next use after k.
        const auto next = uses_[u].upper_bound(k);
        if (next == uses_[u].end()) continue;  // held past its last use: never the case
        for (int32_t depth : {0, depth_}) {
        Candidate c{.value = u, .from = *std::prev(next), .to = *next,
                    .freed_bytes = g_.node(u).bytes, .cost = g_.node(u).cost};
        // Inputs not held into `to` are held there from their last presence, unless that new
        // hold covers the peak: then they are recomputed at `to` too (a few levels deep).
        auto expand = [&](auto&& self, int32_t v, int32_t level) -> void {
          for (int32_t p : g_.preds(v)) {
            if (s.S().Get(c.to, p) || planned[p]) continue;
            planned[p] = 1;
            const int32_t last = LastPresence(s.R(), s.S(), p, c.to);
            const bool covers_peak =
                !live[p] && (last < k || (last == k && (s.S().Get(k, p) || p < i)));
            if (covers_peak && level < depth) {
              c.cost += g_.node(p).cost;
              c.recomputed.push_back(p);
              self(self, p, level + 1);
            } else {
              if (covers_peak) c.freed_bytes -= g_.node(p).bytes;
              c.pins.push_back(p);
            }
          }
        };
        expand(expand, u, 0);
        consider(c);
        if (depth_ == 0) break;
        }
      } else if (u > i && s.S().Get(k, u) && last_read[u] > i) {
        // Held into stage k only to be read after the peak: recompute it there, at its own
        // position, from inputs held into k (those not live at the peak add their bytes).
        const auto use = uses_[u].lower_bound(k);
        if (use == uses_[u].end() || *use != k) continue;
        Candidate c{.value = u, .from = *std::prev(use), .to = k, .freed_bytes = g_.node(u).bytes,
                    .cost = g_.node(u).cost};
        for (int32_t p : g_.preds(u)) {
          if (s.S().Get(k, p)) continue;
          if (!live[p]) c.freed_bytes -= g_.node(p).bytes;
          c.pins.push_back(p);
        }
        consider(c);
      }
    }
    return out;
  }

  double Score(const Candidate& c) const {
    const double cost = c.cost;
    const double bytes = static_cast<double>(c.freed_bytes);
    const double distance = static_cast<double>(c.to - c.from);
    switch (score_) {
      case EvictionScore::kDtr: return cost / (bytes * distance);
      case EvictionScore::kCostPerByte: return cost / bytes;
      case EvictionScore::kFarthestUse: return -distance - bytes * 1e-30;
      case EvictionScore::kLargest: return -bytes;
    }
    return 0;
  }

  // The last stage before `before` in which p is computed or held.
  static int32_t LastPresence(const StageMatrix& R, const StageMatrix& S, int32_t p,
                              int32_t before) {
    return std::max({p, R.LastBefore(p, before), S.LastBefore(p, before)});
  }

  // The eviction as edits of S: the value released over (from, to], each pin held into `to`
  // from its last presence (a pin is an input, never the value, so the release leaves its
  // column as it is).
  std::vector<HoldEdit> Edits(const IncrementalSchedule& s, const Candidate& c) const {
    std::vector<HoldEdit> edits = {
        {.value = c.value, .first = c.from + 1, .last = c.to, .hold = false}};
    for (int32_t p : c.pins) {
      edits.push_back({.value = p, .first = LastPresence(s.R(), s.S(), p, c.to) + 1, .last = c.to,
                       .hold = true});
    }
    return edits;
  }

  // Every value recomputed at `to`, and every input of one, is present there from now on.
  void Commit(const Candidate& c) {
    uses_[c.value].insert(c.to);
    for (int32_t p : g_.preds(c.value)) uses_[p].insert(c.to);
    for (int32_t v : c.recomputed) {
      uses_[v].insert(c.to);
      for (int32_t p : g_.preds(v)) uses_[p].insert(c.to);
    }
  }

  const Graph& g_;
  const int32_t n_;
  const int64_t budget_;
  const EvictionScore score_;
  const int32_t depth_;  // levels of inputs an eviction may recompute along with the value
  const Clock::time_point deadline_;
  std::vector<std::set<int32_t>> uses_;
};

}  // namespace

const char* EvictionScoreName(EvictionScore score) {
  switch (score) {
    case EvictionScore::kDtr: return "dtr";
    case EvictionScore::kCostPerByte: return "cost-per-byte";
    case EvictionScore::kFarthestUse: return "farthest-use";
    case EvictionScore::kLargest: return "largest";
  }
  return "?";
}

const std::vector<EvictionScore>& AllEvictionScores() {
  static const std::vector<EvictionScore> all = {EvictionScore::kDtr, EvictionScore::kCostPerByte,
                                                 EvictionScore::kFarthestUse,
                                                 EvictionScore::kLargest};
  return all;
}

namespace {

double SecondsSince(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

// One pass within `time_limit_s`, its final evaluation included: the pass itself stops
// `evaluate_s` early, the time an evaluation of this graph takes, which is updated with this
// one's.
StrategyResult RunPass(const Graph& graph, int64_t budget_bytes, EvictionScore score,
                       int32_t depth, double time_limit_s, const IncrementalSchedule& start,
                       double& evaluate_s) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(
                                               std::max(0.0, time_limit_s - evaluate_s)));
  auto [schedule, evictions] =
      EvictionPass(graph, budget_bytes, score, depth, deadline).Run(start);
  const bool stopped = Clock::now() >= deadline;
  const auto evaluation = Clock::now();
  StrategyResult result =
      EvaluateSchedule(graph, "evict", std::move(schedule), budget_bytes,
                       fmt::format("rule {}, depth {}, {} evictions{}",
                                   EvictionScoreName(score), depth, evictions,
                                   stopped ? " (time limit)" : ""));
  evaluate_s = std::max(evaluate_s, SecondsSince(evaluation));
  return result;
}

}  // namespace

StrategyResult EvictOnce(const Graph& graph, int64_t budget_bytes, EvictionScore score,
                         int32_t depth, const EvictionOptions& options) {
  const auto begin = Clock::now();
  const IncrementalSchedule start = KeepEverything(graph, budget_bytes);
  double evaluate_s = SecondsSince(begin);  // building the start simulates once too
  return RunPass(graph, budget_bytes, score, depth, options.time_limit_s - SecondsSince(begin),
                 start, evaluate_s);
}

namespace {

// Every rule at depth 3 from `start`, each pass an equal share of the time left; the best
// result (IsBetter).
StrategyResult BestPass(const Graph& graph, int64_t budget_bytes,
                        Clock::time_point begin, const IncrementalSchedule& start) {
  double evaluate_s = SecondsSince(begin);  // building the start simulates once too
  std::optional<StrategyResult> best;
  std::vector<std::pair<EvictionScore, int32_t>> passes;
  for (EvictionScore score : AllEvictionScores()) passes.emplace_back(score, 3);
  for (size_t i = 0; i < passes.size(); ++i) {
    const double left = SecondsLeft();
    // A pass needs at least its evaluation's time; the first runs whatever is left.
    if (best && (left <= evaluate_s || DeadlinePassed())) break;
    // Each remaining pass gets an equal share of the time that is left. A pass whose
    // evaluation the deadline cuts short is dropped; without an earlier one, so is the call.
    try {
      StrategyResult result =
          RunPass(graph, budget_bytes, passes[i].first, passes[i].second,
                  std::max(0.0, std::min(left, 1e9)) / static_cast<double>(passes.size() - i),
                  start, evaluate_s);
      if (!best || IsBetter(result, *best)) best = std::move(result);
    } catch (const TimeLimitReached&) {
      if (!best) throw;
      break;
    }
  }
  return *best;
}

}  // namespace

StrategyResult Evict(const Graph& graph, int64_t budget_bytes, const EvictionOptions& options) {
  const DeadlineScope deadline(options.time_limit_s);
  const auto begin = Clock::now();
  return BestPass(graph, budget_bytes, begin, KeepEverything(graph, budget_bytes));
}

StrategyResult EvictFrom(const Graph& graph, int64_t budget_bytes, const Schedule& start,
                         const EvictionOptions& options) {
  const DeadlineScope deadline(options.time_limit_s);
  const auto begin = Clock::now();
  return BestPass(graph, budget_bytes, begin,
                  IncrementalSchedule(graph, start.S, budget_bytes));
}

}  // namespace remat
