// Tests of src/model/model_info.cc: a network's description sums its layers.
#include "model/model_info.h"

#include <gtest/gtest.h>

namespace remat {
namespace {

TEST(DescribeNetworkTest, SumsParametersAndFlopsOverTheLayers) {
  NetworkBuilder net("t", {2, 10});  // 20 floats in: 80 bytes
  // Dense 10 -> 5 with bias: 55 weights, all trainable; 2 rows x 10 x 5 = 100 FLOPs.
  const int32_t fc = net.Dense("fc", NetworkBuilder::kInput, 5);
  // Batch norm over 5 channels: 20 statistics, 10 trainable; 4 x 10 elements = 40 FLOPs.
  net.BatchNorm("bn", fc);
  const ModelInfo info = DescribeNetwork(net, "tiny");
  EXPECT_EQ(info.model, "tiny");
  EXPECT_EQ(info.batch, 2);
  EXPECT_EQ(info.input_shape, (Shape{2, 10}));
  EXPECT_EQ(info.output_shape, (Shape{2, 5}));
  EXPECT_EQ(info.parameters, 55 + 20);
  EXPECT_EQ(info.trainable_parameters, 55 + 10);
  EXPECT_EQ(info.input_bytes, 80);
  EXPECT_DOUBLE_EQ(info.forward_flops, 100 + 40);
  EXPECT_EQ(info.layers, net.layers());
}

}  // namespace
}  // namespace remat
