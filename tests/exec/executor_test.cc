// Tests src/exec/executor.cc: a step that follows a plan (checkpoint-all, Chen sqrt(n), the LP
// rounding at a tight budget, the optimal MILP) gives the loss and gradients of plain autograd
// on the same weights and inputs, holds exactly the simulator's bytes, and recomputes batch
// norm, layer norm and dropout identically; for the image models and a tiny transformer.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <memory>
#include <string>

#include "core/errors.h"
#include "core/plan.h"
#include "core/simulator.h"
#include "core/training_graph.h"
#include "exec/counting_allocator.h"
#include "exec/executor.h"
#include "exec/network.h"
#include "solvers/checkmate_solver.h"
#include "solvers/rounding.h"
#include "strategies/checkpoint_all.h"
#include "strategies/chen.h"
#include "zoo/registry.h"

namespace remat::exec {
namespace {

constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();

struct Fixture {
  BuiltModel model;
  Graph graph;
  Network network;
  ReferenceStep reference;
};

// Batch 2 at 32x32 with 10 classes: every network's smallest size that keeps its shape. The
// transformer: batch 2, 8 tokens, 2 blocks, hidden 16 in 2 heads of 8, a 32-token vocabulary
// (27 layers: a 55-node training graph).
ModelOptions TestOptions(const std::string& name) {
  if (name == "transformer") {
    return {.batch = 2, .seq_length = 8, .layers = 2, .hidden = 16, .heads = 2, .vocab = 32};
  }
  return {.batch = 2, .resolution = Resolution{32, 32}, .classes = 10};
}

Fixture& Model(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Fixture>> cache;
  auto& slot = cache[name];
  if (!slot) {
    at::set_num_threads(1);
    CountingAllocator::Install();
    BuiltModel model = BuildModel(name, TestOptions(name));
    Graph graph = BuildTrainingGraph(model.forward);
    Network network(model.info, /*seed=*/7);
    ReferenceStep reference = AutogradStep(network);
    slot = std::make_unique<Fixture>(Fixture{std::move(model), std::move(graph),
                                             std::move(network), std::move(reference)});
  }
  return *slot;
}

// The budget halfway between the lower bound on any peak and the no-remat peak.
int64_t TightBudget(const Graph& graph) {
  const int64_t all = CheckpointAll(graph, kUnlimited).peak_bytes;
  return (MinimumPeakLowerBound(graph) + all) / 2;
}

void ExpectMatchesAutograd(const std::string& name, const Schedule& schedule, bool expect_remat) {
  Fixture& f = Model(name);
  Executor executor(f.network, f.graph);
  const Plan plan = BuildPlan(f.graph, schedule);
  const StepResult step = executor.Run(plan);
  const GradientComparison cmp = CompareGradients(CopyGradients(f.network), f.reference.gradients);
  testing::Test::RecordProperty("max_abs_gradient_diff", std::to_string(cmp.max_abs_diff));
  std::printf("[%s] loss %.9g (autograd %.9g) grad diff %.3g (max |g| %.3g) bitwise %d; peak "
              "predicted %lld tensors %lld measured %lld (fixed %lld); recomputations %lld; "
              "%.3f s; largest transient %lld B at node %d\n",
              name.c_str(), step.loss, f.reference.loss, cmp.max_abs_diff, cmp.max_abs_gradient,
              cmp.bitwise_equal, static_cast<long long>(step.predicted_peak_bytes),
              static_cast<long long>(step.tensor_peak_bytes),
              static_cast<long long>(step.measured_peak_bytes),
              static_cast<long long>(step.fixed_bytes),
              static_cast<long long>(step.recomputations), step.seconds,
              static_cast<long long>(step.largest_transient_bytes), step.largest_transient_node);
  EXPECT_EQ(step.loss, f.reference.loss);
  EXPECT_TRUE(cmp.bitwise_equal) << "max abs diff " << cmp.max_abs_diff;
  // The executor holds exactly the planner's tensors: its peak is the simulator's (outputs
  // only; the graph's workspace is an estimate of what comes on top).
  EXPECT_EQ(step.tensor_peak_bytes, step.predicted_tensor_peak_bytes);
  EXPECT_GE(step.predicted_peak_bytes, step.predicted_tensor_peak_bytes);
  // Transients come on top of the held tensors, never below them.
  EXPECT_GE(step.measured_peak_bytes, step.predicted_tensor_peak_bytes);
  if (expect_remat) {
    EXPECT_GT(step.recomputations, 0);
  }
}

class ExecutorTest : public testing::TestWithParam<std::string> {};

TEST_P(ExecutorTest, CheckpointAllMatchesAutograd) {
  const Graph& g = Model(GetParam()).graph;
  ExpectMatchesAutograd(GetParam(), CheckpointAll(g, kUnlimited).schedule, false);
}

TEST_P(ExecutorTest, ChenSqrtNMatchesAutograd) {
  const Graph& g = Model(GetParam()).graph;
  ExpectMatchesAutograd(GetParam(), ChenSqrtN(g, kUnlimited, CandidateSet::kLinearized).schedule,
                        true);
}

TEST_P(ExecutorTest, ChenGreedyAtTightBudgetMatchesAutograd) {
  const Graph& g = Model(GetParam()).graph;
  const StrategyResult greedy = ChenGreedy(g, TightBudget(g), CandidateSet::kLinearized);
  ASSERT_EQ(greedy.status, FitStatus::kFits);
  ExpectMatchesAutograd(GetParam(), greedy.schedule, true);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ExecutorTest,
                         testing::Values("vgg16", "vgg19", "segnet", "mobilenet", "unet",
                                         "resnet50", "transformer"),
                         [](const auto& info) { return info.param; });

// The LP and MILP grow as T^2 + T|E|: solved on the smallest graphs (VGG16's 45 nodes, the
// transformer's 55, U-Net's 71) to keep the suite fast; the executor does not care which
// solver made S.
class SolverScheduleTest : public testing::TestWithParam<std::string> {};

TEST_P(SolverScheduleTest, ApproximationAtTightBudgetMatchesAutograd) {
  // Planned without workspace: at these small sizes a convolution's workspace (copies of its
  // weights) brings the minimum peak so close to the no-remat peak that the LP has no room at
  // (1 - eps) of a budget half-way between them. The plan runs on the graph with workspace
  // all the same (same nodes and edges).
  const Graph g = WithoutWorkspace(Model(GetParam()).graph);
  const OptimizerResult approx = SolveApproxDeterministic(g, TightBudget(g));
  ASSERT_TRUE(approx.schedule.has_value()) << approx.message;
  ExpectMatchesAutograd(GetParam(), approx.schedule->schedule, true);
}

TEST_P(SolverScheduleTest, OptimalAtTightBudgetMatchesAutograd) {
  const Graph& g = Model(GetParam()).graph;
  OptimalOptions options;
  options.mip.time_limit_s = 10;  // a feasible (not necessarily proven optimal) schedule is enough
  const OptimizerResult optimal = SolveOptimal(g, TightBudget(g), options);
  ASSERT_TRUE(optimal.schedule.has_value()) << optimal.message;
  ExpectMatchesAutograd(GetParam(), optimal.schedule->schedule, true);
}

INSTANTIATE_TEST_SUITE_P(Zoo, SolverScheduleTest, testing::Values("vgg16", "unet", "transformer"),
                         [](const auto& info) { return info.param; });

// Without the product rule's edges (docs/design.md §1), bwd(attn_softmax) has no in-edge from
// attn_qkv, whose value part its grad @ V^T needs: the executor refuses the read.
TEST(TransformerEdgesTest, AttentionGradientNeedsTheProductRuleEdges) {
  Fixture& f = Model("transformer");
  ForwardGraph forward = f.model.forward;
  for (ForwardNode& node : forward.nodes) node.backward_reads_inputs = false;
  const Graph design_only = BuildTrainingGraph(forward);
  ASSERT_EQ(design_only.edges().size() + 4, f.graph.edges().size());  // 2 per block
  Executor executor(f.network, design_only);
  const Schedule schedule = CheckpointAll(design_only, kUnlimited).schedule;
  try {
    executor.Run(BuildPlan(design_only, schedule));
    ADD_FAILURE() << "the step ran without the product rule's edges";
  } catch (const InternalError& error) {
    EXPECT_NE(std::string(error.what()).find("h1_attn_qkv"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace remat::exec
