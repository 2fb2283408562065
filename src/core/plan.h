// The operation list of a schedule: allocate, compute and free, in execution order
// (docs/design.md §3, "Execution of stage t"). This is what an executor runs and a simulator checks.
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "core/schedule.h"

namespace remat {

enum class OpKind { kAllocate, kCompute, kFree };

const char* OpKindName(OpKind kind);

struct Op {
  OpKind kind;
  int32_t stage;
  int32_t node;
  bool operator==(const Op&) const = default;
};

using Plan = std::vector<Op>;

// Lowers a schedule to operations by the rules of docs/design.md §3. The plan is built mechanically:
// an incorrect schedule gives a plan that the simulator rejects.
Plan BuildPlan(const Graph& graph, const Schedule& schedule);

}  // namespace remat
