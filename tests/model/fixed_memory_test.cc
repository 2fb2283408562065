// Tests of src/model/fixed_memory.cc: parameters, gradients, optimizer state and input bytes.
#include "model/fixed_memory.h"

#include <gtest/gtest.h>

#include "zoo/registry.h"

namespace remat {
namespace {

TEST(OptimizerTest, NamesAndStateCopies) {
  EXPECT_EQ(ParseOptimizer("adam"), Optimizer::kAdam);
  EXPECT_EQ(ParseOptimizer("momentum"), Optimizer::kMomentum);
  EXPECT_EQ(ParseOptimizer("sgd"), Optimizer::kSgd);
  EXPECT_EQ(ParseOptimizer("lamb"), std::nullopt);
  EXPECT_EQ(OptimizerStateCopies(Optimizer::kSgd), 0);
  EXPECT_EQ(OptimizerStateCopies(Optimizer::kMomentum), 1);
  EXPECT_EQ(OptimizerStateCopies(Optimizer::kAdam), 2);
}

// VGG16 at batch 256: 138,357,544 parameters, all trainable, are 553,430,176 bytes; the input
// batch is 256 * 224*224*3 floats = 154,140,672 bytes.
TEST(FixedMemoryTest, Vgg16Sgd) {
  const FixedMemory fixed = ComputeFixedMemory(BuildModel("vgg16").info, Optimizer::kSgd);
  EXPECT_EQ(fixed.parameter_bytes, 553430176);
  EXPECT_EQ(fixed.gradient_bytes, 553430176);
  EXPECT_EQ(fixed.optimizer_bytes, 0);
  EXPECT_EQ(fixed.input_bytes, 154140672);
  EXPECT_EQ(fixed.total_bytes(), 2 * 553430176 + 154140672);  // 1,261,001,024
}

TEST(FixedMemoryTest, Vgg16MomentumAddsOneCopy) {
  const FixedMemory fixed = ComputeFixedMemory(BuildModel("vgg16").info, Optimizer::kMomentum);
  EXPECT_EQ(fixed.optimizer_bytes, 553430176);
  EXPECT_EQ(fixed.total_bytes(), 3 * int64_t{553430176} + 154140672);
}

TEST(FixedMemoryTest, Vgg16AdamAddsTwoCopies) {
  const FixedMemory fixed = ComputeFixedMemory(BuildModel("vgg16").info, Optimizer::kAdam);
  EXPECT_EQ(fixed.optimizer_bytes, 2 * int64_t{553430176});
  EXPECT_EQ(fixed.total_bytes(), 4 * int64_t{553430176} + 154140672);  // 2,367,861,376
}

// ResNet50's 53,120 batch-norm moving statistics are stored but get no gradient or state:
// parameters 25,636,712 * 4 = 102,546,848 B; trainable 25,583,592 * 4 = 102,334,368 B.
TEST(FixedMemoryTest, ResNet50AdamCountsOnlyTrainableState) {
  const FixedMemory fixed = ComputeFixedMemory(BuildModel("resnet50").info, Optimizer::kAdam);
  EXPECT_EQ(fixed.parameter_bytes, 102546848);
  EXPECT_EQ(fixed.gradient_bytes, 102334368);
  EXPECT_EQ(fixed.optimizer_bytes, 2 * 102334368);
}

// GPT-2 small at batch 8: 8 * 1024 int32 token ids are 32,768 bytes.
TEST(FixedMemoryTest, TransformerInputIsTokenIds) {
  EXPECT_EQ(ComputeFixedMemory(BuildModel("transformer").info, Optimizer::kSgd).input_bytes, 32768);
}

TEST(FixedMemoryTest, ActivationBudgetIsDeviceMinusFixed) {
  const FixedMemory fixed = ComputeFixedMemory(BuildModel("vgg16").info, Optimizer::kSgd);
  // 16 GiB = 17,179,869,184 B minus 1,261,001,024 B fixed.
  EXPECT_EQ(ActivationBudgetBytes(17179869184, fixed), 15918868160);
  EXPECT_LT(ActivationBudgetBytes(1000000000, fixed), 0);  // the weights alone do not fit
}

}  // namespace
}  // namespace remat
