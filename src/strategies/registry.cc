// Names and descriptions of the baseline strategies.
#include "strategies/registry.h"

#include "strategies/checkpoint_all.h"
#include "strategies/chen.h"
#include "strategies/griewank.h"
#include "strategies/module_checkpoints.h"

namespace remat {
namespace {

bool Always(const Graph&) { return true; }

bool HasBlockStructure(const Graph& graph) { return HasForwardPass(graph) && HasBlocks(graph); }

bool HasContractionStructure(const Graph& graph) {
  return HasForwardPass(graph) && HasContractions(graph);
}

}  // namespace

const std::vector<StrategySpec>& BaselineStrategies() {
  static const std::vector<StrategySpec> specs = {
      {"checkpoint-all", "keep every value until its last use (no rematerialization)", Always,
       CheckpointAll},
      {"chen-sqrtn-ap", "Chen sqrt(n): every sqrt(c)-th of the c articulation points",
       HasForwardPass,
       [](const Graph& g, int64_t b) { return ChenSqrtN(g, b, CandidateSet::kArticulationPoints); }},
      {"chen-sqrtn-linear", "Chen sqrt(n) over all forward nodes in topological order",
       HasForwardPass,
       [](const Graph& g, int64_t b) { return ChenSqrtN(g, b, CandidateSet::kLinearized); }},
      {"chen-greedy-ap", "Chen greedy segment-budget sweep over articulation points",
       HasForwardPass,
       [](const Graph& g, int64_t b) {
         return ChenGreedy(g, b, CandidateSet::kArticulationPoints);
       }},
      {"chen-greedy-linear", "Chen greedy segment-budget sweep over all forward nodes",
       HasForwardPass,
       [](const Graph& g, int64_t b) { return ChenGreedy(g, b, CandidateSet::kLinearized); }},
      {"griewank-logn", "binomial checkpointing (revolve) with ceil(log2 f) slots",
       HasForwardPass, GriewankLogN},
      {"griewank", "binomial checkpointing, slot count swept to fit the budget", HasForwardPass,
       Griewank},
      {"checkpoint-blocks",
       "checkpoint every block: keep what crosses block boundaries, recompute inside",
       HasBlockStructure, CheckpointBlocks},
      {"selective",
       "selective recomputation: keep contractions' outputs, recompute the ops between them",
       HasContractionStructure, SelectiveRecompute},
      {"checkpoint-first-blocks",
       "checkpoint the first N blocks, keep the others (Megatron's block method), least N that fits",
       HasBlockStructure, CheckpointFirstBlocks},
      {"selective-first-blocks",
       "checkpoint the first N blocks, selective recomputation in the others, least N that fits",
       [](const Graph& g) { return HasBlockStructure(g) && HasContractionStructure(g); },
       SelectiveAfterFirstBlocks},
      {"selective-fit",
       "selective recomputation that also recomputes the contractions cheapest per byte, the "
       "fewest that fit",
       HasContractionStructure, SelectiveFit},
  };
  return specs;
}

const StrategySpec* FindBaseline(const std::string& name) {
  for (const StrategySpec& spec : BaselineStrategies()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

}  // namespace remat
