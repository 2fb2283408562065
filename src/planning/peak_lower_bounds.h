// Lower bounds on the peak of every schedule of a graph, whatever its budget: what
// `--budget min` certifies its least peak against (docs/solvers.md, "The smallest budget").
#pragma once

#include <cstdint>

#include "core/graph.h"

namespace remat {

// At least MinimumPeakLowerBound: when a node v runs, its inputs are live; consider the input u
// computed last before that (its final computation before v): every other input of v was
// computed earlier and is kept until v, so it is live while u is computed, beside u's own
// inputs, u and u's workspace. The least such set over the inputs u of v bounds the peak. It is
// PendingSetPeakLowerBound at depth 1.
int64_t LastInputPeakLowerBound(const Graph& graph);

struct PendingSetBoundOptions {
  double time_limit_s = 10;  // the search stops at the depth it is in; what it proved stays
  int32_t max_depth = 64;    // deepest level of the game tree
};

struct PendingSetBound {
  int64_t bytes = 0;     // no schedule peaks below this
  int32_t depth = 0;     // the deepest level completed for every node (0: none)
  bool timed_out = false;
};

// The last-input argument carried on: a set X of values is "pending" when each is computed
// (for the last time) before a later moment at which it is still needed, so all of X is live
// when its last-computed member w runs, beside w's inputs and workspace; then X without w, with
// w's inputs, is pending at that moment. A schedule chooses w at every step; the bound is the
// least, over all such choices up to `depth` steps, of the largest memory on the way, started
// from the inputs of every node. Iterative deepening with alpha-beta cut-offs and a table of
// sets already decided; valid at every depth, so the time limit only weakens it.
PendingSetBound PendingSetPeakLowerBound(const Graph& graph,
                                         const PendingSetBoundOptions& options = {});

}  // namespace remat
