// Tests of src/model/kernel_work.cc and the attribution in ToForwardGraph: each backward node
// costs the kernels the executor runs in it, checked by hand on a five-layer network.
#include "model/kernel_work.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "model/cost_model.h"
#include "zoo/registry.h"

namespace remat {
namespace {

// Input 2x8x8x3. a: 3x3 conv, 4 filters, ReLU fused (out 512 elements, FLOPs 9*3*512 + 512 =
// 14336, 112 weights); b: 1x1 conv of a, 4 filters (2048 FLOPs, 20 weights); add(a, b) (512
// FLOPs); flatten (0 FLOPs); dense 256 -> 10 with softmax fused (2*256*10 + 20 = 5140 FLOPs,
// 2570 weights).
NetworkBuilder FiveLayers() {
  NetworkBuilder net("five", {2, 8, 8, 3});
  const int32_t a = net.Conv2D("a", NetworkBuilder::kInput, 4, 3, {.activation = Activation::kRelu});
  const int32_t b = net.Conv2D("b", a, 4, 1);
  const int32_t add = net.Add("add", {a, b});
  const int32_t flat = net.Flatten("flat", add);
  net.Dense("fc", flat, 10, {.activation = Activation::kSoftmax});
  return net;
}

TEST(KernelWorkTest, BackwardNodesCostTheirConsumersKernels) {
  // At this size every kernel is memory-bound: it costs k = kFlopsPerElementMoved per element
  // moved, more than its FLOPs (checked for each). The input has 384 elements, a's and b's
  // outputs 512 each; a's weights 3*3*3*4 + 4 = 112, b's 4*4 + 4 = 20, fc's 256*10 + 10 = 2570.
  const ForwardGraph g = ToForwardGraph(FiveLayers(), "five", CostModel::kFlops, nullptr);
  ASSERT_EQ(g.nodes.size(), 5u);
  const double k = kFlopsPerElementMoved;
  // Forward: a reads 384 + 112 and writes 512 (14336 FLOPs); b reads 512 + 20, writes 512
  // (2048 FLOPs); add reads 512 + 512, writes 512; flat reads and writes 512; fc reads
  // 512 + 2570 and writes 20 (5140 FLOPs).
  EXPECT_DOUBLE_EQ(g.nodes[0].cost, k * (384 + 112 + 512));
  EXPECT_GT(k * (384 + 112 + 512), 14336);
  EXPECT_DOUBLE_EQ(g.nodes[1].cost, k * (512 + 20 + 512));
  EXPECT_DOUBLE_EQ(g.nodes[2].cost, k * 1536);
  EXPECT_DOUBLE_EQ(g.nodes[3].cost, k * 1024);
  EXPECT_DOUBLE_EQ(g.nodes[4].cost, k * (512 + 2570 + 20));
  EXPECT_GT(k * (512 + 2570 + 20), 5140);
  // bwd(fc): the loss gradient only, 3 x 20 elements (60 FLOPs).
  EXPECT_DOUBLE_EQ(*g.nodes[4].backward_cost, k * 60);
  // bwd(flat): fc's input gradient reads the output gradient and (through the softmax) the
  // output, 20 + 20, and the weights, and writes 512; fc's weight gradient reads the output
  // gradient and the input and writes the weight gradient.
  EXPECT_DOUBLE_EQ(*g.nodes[3].backward_cost,
                   k * (20 + 20 + 2570 + 512) + k * (20 + 512 + 2570));
  // bwd(add): flatten's gradient, a copy: 512 read twice and 512 written.
  EXPECT_DOUBLE_EQ(*g.nodes[2].backward_cost, k * 1536);
  // bwd(b): add's gradient for its second input; add's first input is a, so no weights here.
  EXPECT_DOUBLE_EQ(*g.nodes[1].backward_cost, k * 1536);
  // bwd(a): b's input gradient and weight gradient (each 512 + 512 + 20), add's gradient for
  // its first input (1536), and a's own weight gradient (512 + 384 + 112: a reads the network
  // input).
  EXPECT_DOUBLE_EQ(*g.nodes[0].backward_cost,
                   k * (1044 + 1044 + 1536 + (512 + 384 + 112)));
}

TEST(KernelWorkTest, WorkspaceIsTheLargestSetOfTemporariesInsideANode) {
  const ForwardGraph g = ToForwardGraph(FiveLayers(), "five", CostModel::kFlops, nullptr);
  // Forward: a's 3x3 convolution makes blocked copies, the larger of its output (512 floats,
  // 2048 B) and its input with its weights (384 + 112 floats, 1984 B); b's 1x1 convolution
  // makes none; fc's softmax runs out of place, on its 2x10 floats (80 B).
  EXPECT_EQ(g.nodes[0].workspace_bytes, 2048);
  EXPECT_EQ(g.nodes[1].workspace_bytes, 0);
  EXPECT_EQ(g.nodes[2].workspace_bytes, 0);
  EXPECT_EQ(g.nodes[4].workspace_bytes, 80);
  // bwd(fc): the loss gradient of probabilities makes no output-sized temporary.
  EXPECT_EQ(g.nodes[4].backward_workspace_bytes, 0);
  // bwd(flat): fc's gradient before its softmax (80 B); its weight gradient is accumulated in
  // place.
  EXPECT_EQ(g.nodes[3].backward_workspace_bytes, 80);
  EXPECT_EQ(g.nodes[2].backward_workspace_bytes, 0);
  EXPECT_EQ(g.nodes[1].backward_workspace_bytes, 0);
  // bwd(a): b's fresh weight gradient (20 floats) with its input gradient (a 1x1 convolution:
  // no blocked copies); then add's
  // contribution (512 floats) beside the first; then a's own weight gradient (112 floats) and
  // its ReLU's gradient (512 floats) beside the whole gradient: 448 + 2048 B, the largest.
  EXPECT_EQ(g.nodes[0].backward_workspace_bytes, 448 + 2048);
}

TEST(KernelWorkTest, WorkspaceOfConvolutionsPoolingAndBatchNorm) {
  NetworkBuilder net("six", {2, 8, 8, 3});
  const int32_t c1 =
      net.Conv2D("c1", NetworkBuilder::kInput, 4, 3, {.activation = Activation::kRelu});
  const int32_t c2 = net.Conv2D("c2", c1, 8, 3, {.activation = Activation::kRelu});
  const int32_t pool = net.MaxPool("pool", c2, 2);
  const int32_t bn = net.BatchNorm("bn", pool);
  net.Dense("fc", net.Flatten("flat", bn), 10, {.activation = Activation::kSoftmax});
  const ForwardGraph g = ToForwardGraph(net, "six", CostModel::kFlops, nullptr);
  // c2: output 2x8x8x8 = 1024 floats (4096 B), input 512 floats (2048 B), weights
  // 3x3x4x8 + 8 = 296 floats (1184 B): blocked copies of the output, or of input and weights.
  EXPECT_EQ(g.nodes[c2].workspace_bytes, std::max<int64_t>(4096, 2048 + 1184));
  // The pooling's int64 indices: twice its 2x4x4x8 = 256-float output.
  EXPECT_EQ(g.nodes[pool].workspace_bytes, 2 * 1024);
  EXPECT_EQ(g.nodes[bn].workspace_bytes, 0);
  // bwd(c1) runs c2's backward: its ReLU's gradient (4096 B), blocked copies of the output
  // gradient and of the input gradient (4096 + 2048 B, more than the weights) and the fresh
  // weight gradient (1184 B).
  EXPECT_EQ(g.nodes[c1].backward_workspace_bytes, 4096 + 4096 + 2048 + 1184);
  // bwd(c2) runs the pooling's backward: the recomputed indices (2048 B); the recomputed
  // values (1024 B) are released before the 4096-B input gradient is allocated.
  EXPECT_EQ(g.nodes[c2].backward_workspace_bytes, 2048);
  // bwd(pool) runs the batch norm's backward: a temporary of its input (1024 B) and its fresh
  // scale and shift gradients (16 floats).
  EXPECT_EQ(g.nodes[pool].backward_workspace_bytes, 1024 + 64);

  // For a device preset (a GPU) oneDNN's blocked copies are not counted: c2's forward has
  // none, and bwd(c1) holds the ReLU's gradient and the fresh weight gradient only.
  const DeviceSpec gpu = DeviceByName("v100-16gb");
  const ForwardGraph portable = ToForwardGraph(net, "six", CostModel::kFlops, &gpu);
  EXPECT_EQ(portable.nodes[c2].workspace_bytes, 0);
  EXPECT_EQ(portable.nodes[c1].backward_workspace_bytes, 4096 + 1184);
  EXPECT_EQ(portable.nodes[pool].workspace_bytes, 2 * 1024);
  EXPECT_EQ(portable.nodes[c2].backward_workspace_bytes, 2048);
}

TEST(KernelWorkTest, ConvolutionBackwardIsAboutTwiceTheForward) {
  // VGG16's FLOPs (not its costs, which include memory floors) are almost all convolutions
  // and dense layers: their backward runs two products of the forward's size, except
  // block1_conv1's input gradient (the data needs none). An independent check of the attribution's total.
  const NetworkBuilder vgg = BuildNetwork("vgg16", {.batch = 2});
  double forward = 0;
  double backward = 0;
  for (int32_t j = 0; j < static_cast<int32_t>(vgg.layers().size()); ++j) {
    forward += ForwardWork(vgg, j).flops;
    for (const BackwardKernel& kernel : BackwardKernels(vgg, j)) backward += kernel.work.flops;
  }
  EXPECT_GT(backward / forward, 1.9);
  EXPECT_LT(backward / forward, 2.0);
}

TEST(KernelWorkTest, EveryWeightGradientIsChargedOnceAndEveryInputGradientOnce) {
  // Over all backward nodes of every zoo model: each layer with weight gradients has exactly one
  // weight-gradient kernel (the tied head's included), each layer one input-gradient kernel per
  // input position that reads a layer, and the loss gradient is in one node.
  for (const ModelSpec& spec : ZooModels()) {
    SCOPED_TRACE(spec.name);
    ModelOptions options{.batch = 1};
    if (spec.is_transformer) {
      options.layers = 2;
      options.seq_length = 16;
    } else {
      options.resolution = Resolution{64, 64};
    }
    const NetworkBuilder net = BuildNetwork(spec.name, options);
    const int32_t f = static_cast<int32_t>(net.layers().size());
    std::vector<int32_t> weights(f, 0), inputs(f, 0);
    int32_t losses = 0;
    for (int32_t j = 0; j < f; ++j) {
      for (const BackwardKernel& kernel : BackwardKernels(net, j)) {
        if (kernel.kind == GradientKind::kWeights) ++weights[kernel.layer];
        if (kernel.kind == GradientKind::kInput) ++inputs[kernel.layer];
        if (kernel.kind == GradientKind::kLoss) ++losses;
      }
    }
    EXPECT_EQ(losses, 1);
    int32_t tied = 0;
    for (int32_t id = 0; id < f; ++id) {
      const Layer& layer = net.layers()[id];
      SCOPED_TRACE(layer.name);
      const bool trained = layer.trainable_parameters > 0 || layer.tied_to >= 0;
      tied += layer.tied_to >= 0;
      EXPECT_EQ(weights[id], trained ? 1 : 0);
      int32_t layer_inputs = 0;
      for (int32_t input : layer.inputs) layer_inputs += input != NetworkBuilder::kInput;
      EXPECT_EQ(inputs[id], layer_inputs);
    }
    EXPECT_EQ(tied, spec.is_transformer ? 1 : 0);
  }
}

TEST(KernelWorkTest, WorkspaceNoneCountsNothingAndChangesNothingElse) {
  const NetworkBuilder net = FiveLayers();
  const ForwardGraph cpu = ToForwardGraph(net, "five", CostModel::kFlops, nullptr);
  const ForwardGraph none =
      ToForwardGraph(net, "five", CostModel::kFlops, nullptr, WorkspaceModel::kNone);
  ASSERT_EQ(none.nodes.size(), cpu.nodes.size());
  // Without a device the default is kLibtorchCpu: a's 3x3 convolution makes oneDNN copies and
  // fc's fused softmax is out of place, so that graph has workspace; kNone has none, with the
  // same bytes and costs.
  int64_t cpu_total = 0;
  for (size_t i = 0; i < none.nodes.size(); ++i) {
    EXPECT_EQ(none.nodes[i].workspace_bytes, 0) << i;
    EXPECT_EQ(none.nodes[i].backward_workspace_bytes, 0) << i;
    EXPECT_EQ(none.nodes[i].bytes, cpu.nodes[i].bytes) << i;
    EXPECT_DOUBLE_EQ(none.nodes[i].cost, cpu.nodes[i].cost) << i;
    EXPECT_EQ(none.nodes[i].backward_cost, cpu.nodes[i].backward_cost) << i;
    cpu_total += cpu.nodes[i].workspace_bytes + cpu.nodes[i].backward_workspace_bytes;
  }
  EXPECT_GT(cpu_total, 0);
  for (int32_t j = 0; j < 5; ++j) {
    for (const BackwardKernel& kernel : BackwardKernels(net, j, WorkspaceModel::kNone)) {
      EXPECT_EQ(kernel.workspace_bytes, 0) << "bwd(" << j << ")";
    }
  }
}

}  // namespace
}  // namespace remat
