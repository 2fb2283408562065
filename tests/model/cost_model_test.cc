// Tests of src/model/cost_model.cc and src/model/devices.cc: the roofline model and the presets.
#include "model/cost_model.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "zoo/registry.h"

namespace remat {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

TEST(DevicesTest, PresetsInOrderWithCapacities) {
  std::vector<std::string> names;
  for (const DeviceSpec& device : DevicePresets()) names.push_back(device.name);
  EXPECT_EQ(names, (std::vector<std::string>{"v100-16gb", "a100-40gb", "a100-80gb", "h100-80gb",
                                             "h200-141gb"}));
  EXPECT_EQ(DeviceByName("v100-16gb").memory_bytes, 16 * kGiB);
  EXPECT_EQ(DeviceByName("h200-141gb").memory_bytes, 141 * kGiB);
  EXPECT_DOUBLE_EQ(DeviceByName("a100-40gb").bandwidth_bytes_per_s, 1555e9);
  EXPECT_EQ(FindDevice("tpu"), nullptr);
}

TEST(DevicesTest, UnknownDeviceListsTheKnownOnes) {
  try {
    DeviceByName("a100");
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("v100-16gb, a100-40gb"), std::string::npos);
  }
}

TEST(CostModelTest, NamesAndUnits) {
  EXPECT_EQ(ParseCostModel("roofline"), CostModel::kRoofline);
  EXPECT_EQ(ParseCostModel("flops"), CostModel::kFlops);
  EXPECT_EQ(ParseCostModel("time"), std::nullopt);
  EXPECT_STREQ(CostUnit(CostModel::kFlops), "flop");
  EXPECT_STREQ(CostUnit(CostModel::kRoofline), "ms");
}

TEST(CostModelTest, RooflineTakesTheSlowerOfComputeAndMemory) {
  const DeviceSpec device{.name = "toy", .peak_flops_per_s = 1e12, .bandwidth_bytes_per_s = 1e9};
  // 2e9 FLOPs take 2 ms; 1e6 bytes take 1 ms: compute-bound, 2 ms.
  EXPECT_DOUBLE_EQ(RooflineMs(2e9, 1000000, device), 2.0);
  // 1e6 FLOPs take 0.001 ms; 5e6 bytes take 5 ms: memory-bound, 5 ms.
  EXPECT_DOUBLE_EQ(RooflineMs(1e6, 5000000, device), 5.0);
}

TEST(CostModelTest, BytesMovedAreInputsOutputAndWeights) {
  NetworkBuilder net("t", {2, 10});                               // input 80 bytes
  const int32_t fc = net.Dense("fc", NetworkBuilder::kInput, 5);  // out 40 B, 55 weights
  const int32_t add = net.Add("add", {fc, fc});                   // reads 2 x 40, writes 40
  EXPECT_EQ(LayerBytesMoved(net, fc), 80 + 40 + 55 * 4);
  EXPECT_EQ(LayerBytesMoved(net, add), 40 + 40 + 40);
  // A layer that reads one tensor twice is one edge.
  const ForwardGraph forward = ToForwardGraph(net, "t", CostModel::kFlops, nullptr);
  EXPECT_EQ(forward.edges, (std::vector<Edge>{{0, 1}}));
  EXPECT_EQ(forward.loss_bytes, 8);  // 2 samples
}

TEST(CostModelTest, RooflineGraphIsInMilliseconds) {
  const DeviceSpec& v100 = DeviceByName("v100-16gb");
  const BuiltModel flops = BuildModel("vgg16");
  const BuiltModel timed =
      BuildModel("vgg16", {.cost_model = CostModel::kRoofline, .device = v100});
  EXPECT_EQ(timed.forward.cost_unit, "ms");
  // block1_conv1: 28 * 822,083,584 FLOPs take 1.47 ms at 15.7 TFLOP/s, but it moves the
  // 154,140,672 B input, the 3,288,334,336 B output and 1792 weights: 3.82 ms at 900 GB/s.
  EXPECT_DOUBLE_EQ(timed.forward.nodes[0].cost,
                   (154140672.0 + 3288334336.0 + 1792 * 4) / 900e9 * 1e3);
  // block1_conv2: (3*3*64 + 1) * 822,083,584 FLOPs take 30.2 ms; its 6.6 GB take 7.3 ms.
  EXPECT_DOUBLE_EQ(timed.forward.nodes[1].cost, flops.forward.nodes[1].cost / 15.7e12 * 1e3);
  EXPECT_DOUBLE_EQ(flops.forward.nodes[1].cost, 577.0 * 822083584.0);
  // block1_pool has no FLOPs: reads 3,288,334,336 B, writes a quarter of it, at 900 GB/s.
  const double pool_bytes = 3288334336.0 + 3288334336.0 / 4;
  EXPECT_DOUBLE_EQ(timed.forward.nodes[2].cost, pool_bytes / 900e9 * 1e3);
}

TEST(CostModelTest, RooflineWithoutDeviceIsAnInputError) {
  EXPECT_THROW(BuildModel("vgg16", {.cost_model = CostModel::kRoofline}), InputError);
}

}  // namespace
}  // namespace remat
