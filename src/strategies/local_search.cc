// Hill climbing over S. A recomputation of v in stage t whose previous presence is stage t0 is
// replaced by holding v through stages t0+1..t ("add a hold"); if that overflows a stage, the
// cheapest hold live through that stage may be given up in exchange ("swap"), or several smaller
// ones that cost least per byte freed. Each candidate is priced stage by stage
// (IncrementalSchedule: only the stages a move reaches are recomputed); only fitting, cheaper
// schedules are kept, and each one kept is rebuilt with the R-from-S rule and simulated.
#include "strategies/local_search.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <initializer_list>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/cancellation.h"
#include "core/simulator.h"
#include "strategies/incremental_schedule.h"

namespace remat {
namespace {

struct Gap {
  int32_t value;
  int32_t from;  // last stage before the recomputation in which the value is present
  int32_t to;    // the stage that recomputes it
};

// Every recomputation, with the last earlier stage in which the value was present.
std::vector<Gap> Recomputations(const Schedule& s) {
  const std::vector<std::vector<int32_t>> rows = s.R.Rows();
  std::vector<Gap> gaps;
  for (int32_t t = 0; t < s.stages(); ++t) {
    for (int32_t v : rows[t]) {
      if (v >= t || s.S.Get(t, v)) continue;
      const int32_t from = std::max(s.R.LastBefore(v, t), s.S.LastBefore(v, t));
      if (from >= 0) gaps.push_back({v, from, t});
    }
  }
  return gaps;
}

class Search {
 public:
  // Throws TimeLimitReached when the caller's deadline comes before the start is simulated.
  Search(const Graph& graph, int64_t budget_bytes, StrategyResult start)
      : g_(graph), budget_(budget_bytes), best_(std::move(start)), state_(g_, best_.schedule.S) {
    stage_peak_bytes_ = Simulate(g_, best_.schedule).stage_peak_bytes;
  }

  // Until no move improves or the caller's deadline (core/cancellation.h); a move being
  // priced or verified at the deadline is dropped, and best_ is the last kept one.
  StrategyResult Run() {
    const double start_cost = best_.cost;
    bool stopped = false;
    try {
      Improve();
    } catch (const TimeLimitReached&) {
      stopped = true;
    }
    stopped = stopped || DeadlinePassed();
    best_.parameters +=
        fmt::format("; local search: {} holds added, {} swaps, cost {:.6g} -> {:.6g}{}", holds_,
                    swaps_, start_cost, best_.cost, stopped ? " (time limit)" : "");
    return std::move(best_);
  }

 private:
  void Improve() {
    for (bool improved = true; improved && !DeadlinePassed();) {
      improved = false;
      std::vector<Gap> gaps = Recomputations(best_.schedule);
      // Dearest recomputation first; shorter holds first among equals.
      std::stable_sort(gaps.begin(), gaps.end(), [&](const Gap& a, const Gap& b) {
        const double ca = g_.node(a.value).cost, cb = g_.node(b.value).cost;
        if (ca != cb) return ca > cb;
        return a.to - a.from < b.to - b.from;
      });
      for (const Gap& gap : gaps) {
        if (DeadlinePassed()) break;
        if (!best_.schedule.R.Get(gap.to, gap.value)) continue;  // removed by an earlier move
        if (TryHold(gap)) improved = true;
      }
    }
  }

  // Holds gap.value through stages from+1..to; on overflow, tries giving up one hold.
  bool TryHold(const Gap& gap) {
    const int64_t bytes = g_.node(gap.value).bytes;
    // Stages strictly inside the gap grow by exactly the value's bytes (nothing there reads
    // it), so their simulated peaks tell which stage would overflow.
    int32_t worst = -1;
    int64_t overflow = 0;
    for (int32_t k = gap.from + 1; k < gap.to; ++k) {
      const int64_t over = stage_peak_bytes_[k] + bytes - budget_;
      if (over > overflow) {
        overflow = over;
        worst = k;
      }
    }
    const HoldEdit hold{.value = gap.value, .first = gap.from + 1, .last = gap.to, .hold = true};
    if (worst < 0 && Accept({hold})) {
      ++holds_;
      return true;
    }
    if (worst < 0) return false;
    // Swap: give up the run of stages during which a cheaper value is held through `worst`.
    std::vector<std::pair<double, int32_t>> victims;
    for (int32_t w : HeldIn(worst)) {
      if (w == gap.value || g_.node(w).bytes < overflow) continue;
      if (g_.node(w).cost >= g_.node(gap.value).cost) continue;
      victims.emplace_back(g_.node(w).cost, w);
    }
    std::sort(victims.begin(), victims.end());
    if (victims.size() > 4) victims.resize(4);
    for (const auto& [cost, w] : victims) {
      if (Accept({hold, Release(worst, w)})) {
        ++swaps_;
        return true;
      }
    }
    return TrySwapMany(hold, gap.to, worst, overflow);
  }

  // Gives up the run of holds of `w` through `stage` (w is held there: it came from S's row).
  HoldEdit Release(int32_t stage, int32_t w) const {
    const StageRun run = *best_.schedule.S.RunAt(stage, w);
    return {.value = w, .first = std::max(w + 1, run.first), .last = run.last, .hold = false};
  }

  // Swap with several smaller holds through `worst`: those whose release costs least per byte
  // freed (each priced alone, exactly), taken in that order until their bytes cover the
  // overflow, as long as together they cost less than the hold saves. A value recomputed for
  // little per byte (an attention output beside the matmul outputs it reads) makes room
  // for one that saves more per byte; the single swaps above need a victim as large as the
  // overflow. Pricing is skipped where it cannot pay: the hold saves at most what stage `to`
  // recomputes (the value is absent from the stages between), and a release costs at least
  // the value's cost in each stage of the run whose own node reads it (it is held nowhere
  // there any more).
  bool TrySwapMany(const HoldEdit& hold, int32_t to, int32_t worst, int64_t overflow) {
    double most_saved = 0;
    for (int32_t i : state_.computed()[to]) {
      if (i != to) most_saved += g_.node(i).cost;
    }
    struct Victim {
      double cost;  // of giving up its hold alone
      int64_t bytes;
      HoldEdit release;
      double per_byte() const { return cost / static_cast<double>(bytes); }
    };
    std::vector<Victim> victims;
    for (int32_t w : HeldIn(worst)) {
      const int64_t bytes = g_.node(w).bytes;
      if (w == hold.value || bytes <= 0) continue;
      const HoldEdit release = Release(worst, w);
      // A tangent read by a thousand stages is never a cheap victim, and pricing it took
      // milliseconds (an 80-layer GPT-2's search: 6 s -> 14 s).
      const std::vector<int32_t>& readers = g_.succs(w);
      const auto in_run = std::upper_bound(readers.begin(), readers.end(), release.last) -
                          std::lower_bound(readers.begin(), readers.end(), release.first);
      if (g_.node(w).cost * static_cast<double>(in_run) >= most_saved) continue;
      const double cost = ReleaseCost(release);
      if (cost < most_saved) victims.push_back({cost, bytes, release});
    }
    int64_t room = 0;
    for (const Victim& victim : victims) room += victim.bytes;
    if (room < overflow) return false;
    const double saving = best_.cost - state_.Evaluate(std::span(&hold, 1)).cost;
    if (saving <= 0) return false;
    std::erase_if(victims, [&](const Victim& v) { return v.cost >= saving; });
    std::sort(victims.begin(), victims.end(),
              [](const Victim& a, const Victim& b) { return a.per_byte() < b.per_byte(); });
    std::vector<HoldEdit> edits = {hold};
    int64_t freed = 0;
    double cost = 0;
    for (const Victim& victim : victims) {
      if (DeadlinePassed()) return false;
      cost += victim.cost;
      if (cost >= saving) return false;
      edits.push_back(victim.release);
      freed += victim.bytes;
      if (freed < overflow) continue;
      if (Accept(edits)) {
        swaps_ += static_cast<int32_t>(edits.size()) - 1;
        return true;
      }
    }
    return false;
  }

  // What giving up `release` alone adds to the cost, priced once for the whole search: it only
  // orders the victims (a kept move may change it; Accept prices every move exactly), and
  // pricing ~150 holds again after every kept move took the GPT-2-medium-like graph's search
  // from 1 s to 7 s.
  double ReleaseCost(const HoldEdit& release) {
    const std::array<int32_t, 3> key = {release.value, release.first, release.last};
    if (const auto it = release_cost_.find(key); it != release_cost_.end()) return it->second;
    const double cost = state_.Evaluate(std::span(&release, 1)).cost - best_.cost;
    release_cost_.emplace(key, cost);
    return cost;
  }

  // The values S holds into `stage`, listed once per stage until a kept move changes the row
  // (listing costs time linear in the graph).
  const std::vector<int32_t>& HeldIn(int32_t stage) {
    if (held_listed_.empty()) {
      held_listed_.assign(g_.size(), false);
      held_.assign(g_.size(), {});
    }
    if (!held_listed_[stage]) {
      held_[stage] = best_.schedule.S.RowOnes(stage);
      held_listed_[stage] = true;
    }
    return held_[stage];
  }

  // Keeps the move when it fits and saves more than rounding (the stage sums are added in
  // another order than the simulator's).
  bool Accept(std::initializer_list<HoldEdit> edits) {
    return Accept(std::span(edits.begin(), edits.size()));
  }
  bool Accept(std::span<const HoldEdit> edits) {
    const IncrementalSchedule::Outcome outcome = state_.Evaluate(edits);
    if (outcome.peak_bytes > budget_ || best_.cost - outcome.cost <= 1e-9 * best_.cost) {
      return false;
    }
    state_.Commit();
    for (const HoldEdit& edit : edits) {
      for (int32_t t = edit.first; t <= edit.last && !held_listed_.empty(); ++t) {
        held_listed_[t] = false;
      }
    }
    best_.schedule = state_.Verify();
    best_.cost = state_.cost();
    best_.peak_bytes = state_.peak_bytes();
    stage_peak_bytes_ = state_.stage_peak_bytes();
    return true;
  }

  const Graph& g_;
  const int64_t budget_;
  StrategyResult best_;
  IncrementalSchedule state_;  // best_'s S, its R rebuilt from S
  std::vector<int64_t> stage_peak_bytes_;  // best_'s, by the simulator
  std::vector<std::vector<int32_t>> held_;  // HeldIn's lists, by stage
  std::vector<bool> held_listed_;
  std::map<std::array<int32_t, 3>, double> release_cost_;  // ReleaseCost's, by edit
  int32_t holds_ = 0;
  int32_t swaps_ = 0;
};

}  // namespace

StrategyResult ImproveSchedule(const Graph& graph, int64_t budget_bytes, StrategyResult start,
                               const LocalSearchOptions& options) {
  if (start.status != FitStatus::kFits) return start;
  const DeadlineScope deadline(options.time_limit_s);
  std::optional<Search> search;
  try {
    search.emplace(graph, budget_bytes, start);
  } catch (const TimeLimitReached&) {
    start.parameters += "; local search: no time left (time limit)";
    return start;
  }
  return search->Run();
}

}  // namespace remat
