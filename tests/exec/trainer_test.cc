// Training under a plan: every step's gradients equal autograd's, the weights after K steps
// equal those trained without rematerialization, the loss falls, and batch-norm running
// statistics advance once per step although each step also runs the no-remat plan for timing.
#include "exec/trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/training_graph.h"
#include "strategies/checkpoint_all.h"
#include "strategies/chen.h"
#include "zoo/registry.h"

namespace remat::exec {
namespace {

constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max();
constexpr uint64_t kSeed = 7;

BuiltModel SmallModel(const std::string& name) {
  return BuildModel(name, {.batch = 2, .resolution = Resolution{32, 32}, .classes = 10});
}

// Every trainable parameter and running statistic of the network, in layer order.
std::vector<at::Tensor> State(const Network& network) {
  std::vector<at::Tensor> state;
  for (int32_t id = 0; id < network.size(); ++id) {
    for (const at::Tensor& p : network.parameters(id)) state.push_back(p.clone());
    const LayerTensors& t = network.tensors(id);
    if (t.running_mean.defined()) state.push_back(t.running_mean.clone());
    if (t.running_var.defined()) state.push_back(t.running_var.clone());
  }
  return state;
}

void ExpectBitwiseEqual(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_TRUE(at::isfinite(a[k]).all().item<bool>()) << "tensor " << k << " diverged";
    EXPECT_TRUE(at::equal(a[k], b[k])) << "tensor " << k << " differs";
  }
}

// The model, its training graph, and its plans without rematerialization and under Chen's
// sqrt(n) (which recomputes).
struct Planned {
  BuiltModel model;
  Graph graph;
  Plan no_remat;
  Plan chen;
  explicit Planned(const std::string& name)
      : model(SmallModel(name)),
        graph(BuildTrainingGraph(model.forward)),
        no_remat(BuildPlan(graph, CheckpointAll(graph, kUnlimited).schedule)),
        chen(BuildPlan(graph, ChenSqrtN(graph, kUnlimited, CandidateSet::kLinearized).schedule)) {}
};

class TrainerTest : public testing::TestWithParam<std::string> {};

// Chen's sqrt(n) plan recomputes; three SGD steps under it must give exactly the weights and
// statistics of three steps without rematerialization, with autograd's gradients each step.
TEST_P(TrainerTest, RematerializedTrainingEqualsPlainTraining) {
  const Planned p(GetParam());
  const auto& [model, graph, no_remat, chen] = p;
  const TrainOptions options{.steps = 3, .learning_rate = 0.001, .check_gradients = true};

  Network remat_network(model.info, kSeed);
  const TrainReport report = Train(remat_network, graph, chen, no_remat, options);
  Network plain_network(model.info, kSeed);
  const TrainReport plain = Train(plain_network, graph, no_remat, no_remat, options);

  ASSERT_EQ(report.steps.size(), 3u);
  ASSERT_TRUE(report.gradients_match.has_value());
  EXPECT_TRUE(*report.gradients_match) << "max |diff| " << *report.max_abs_gradient_diff;
  for (const TrainStepRecord& step : report.steps) {
    ASSERT_TRUE(step.gradients_match.has_value());
    EXPECT_TRUE(*step.gradients_match);
  }
  EXPECT_GT(report.peak_step.recomputations, 0) << "Chen's plan recomputes something";
  EXPECT_EQ(plain.peak_step.recomputations, 0);
  ExpectBitwiseEqual(State(remat_network), State(plain_network));
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(report.steps[k].loss, plain.steps[k].loss);
  // Training on one batch: three steps of SGD lower its loss.
  EXPECT_LT(report.steps[2].loss, report.steps[0].loss);
  // The executor holds exactly the simulator's bytes; the allocator sees more (transients).
  EXPECT_EQ(report.peak_step.tensor_peak_bytes, report.peak_step.predicted_tensor_peak_bytes);
  EXPECT_GE(report.peak_step.measured_peak_bytes, report.peak_step.predicted_tensor_peak_bytes);
  EXPECT_LT(report.peak_step.predicted_peak_bytes, plain.peak_step.predicted_peak_bytes);
  EXPECT_GT(report.median_seconds, 0);
  EXPECT_GT(report.median_no_remat_seconds, 0);
}

// The oracle: the executor's step and an SGD update, by hand, without the timing runs.
TEST_P(TrainerTest, TimingRunsLeaveTheTrainingTrajectoryUnchanged) {
  const Planned p(GetParam());
  const auto& [model, graph, no_remat, chen] = p;
  constexpr double kRate = 0.002;

  Network trained(model.info, kSeed);
  const TrainReport report =
      Train(trained, graph, chen, no_remat, {.steps = 2, .learning_rate = kRate});
  EXPECT_FALSE(report.gradients_match.has_value()) << "not checked, so not reported";

  Network by_hand(model.info, kSeed);
  Executor executor(by_hand, graph);
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    executor.Run(chen, seed);
    for (int32_t id = 0; id < by_hand.size(); ++id) {
      std::vector<at::Tensor> parameters = by_hand.parameters(id);
      for (size_t p = 0; p < parameters.size(); ++p) {
        parameters[p].add_(by_hand.gradients(id)[p], -kRate);
      }
    }
  }
  ExpectBitwiseEqual(State(trained), State(by_hand));
}

INSTANTIATE_TEST_SUITE_P(Zoo, TrainerTest, testing::Values("vgg16", "resnet50"),
                         [](const auto& info) { return info.param; });

TEST(TrainerOptionsTest, ZeroStepsAreRejected) {
  const Planned p("vgg16");
  Network network(p.model.info, kSeed);
  EXPECT_THROW(Train(network, p.graph, p.no_remat, p.no_remat, {.steps = 0}), InputError);
}

}  // namespace
// The plan costs 1.1x the no-remat plan; the second run after each update is 20% slower.
// Step 0 runs the baseline first (1.0 s, plan 1.32 s), step 1 the plan first (1.1 s, baseline
// 1.2 s): the ratios 1.32 and 1.1 / 1.2 have the geometric mean 1.1.
TEST(TrainReportTest, MeasuredOverheadIsTheGeometricMeanOfThePerStepRatios) {
  TrainReport report;
  report.steps = {{.seconds = 1.32, .no_remat_seconds = 1.0},
                  {.seconds = 1.1, .no_remat_seconds = 1.2}};
  EXPECT_NEAR(report.measured_overhead(), 1.1, 1e-12);
  report.steps.push_back({.seconds = 2.0, .no_remat_seconds = 1.0});
  EXPECT_NEAR(report.measured_overhead(), std::cbrt(1.32 * (1.1 / 1.2) * 2.0), 1e-12);
  report.steps.push_back({.seconds = 1.0, .no_remat_seconds = 0.0});  // no baseline time
  EXPECT_EQ(report.measured_overhead(), 0.0);
  EXPECT_EQ(TrainReport{}.measured_overhead(), 0.0);
}

}  // namespace remat::exec
