// Tests of src/zoo/registry.cc: names, defaults, option checking and batch linearity.
#include "zoo/registry.h"

#include <gtest/gtest.h>

#include <functional>

#include "core/errors.h"

namespace remat {
namespace {

std::string ErrorOf(const std::function<void()>& run) {
  try {
    run();
  } catch (const InputError& error) {
    return error.what();
  }
  return "(no InputError)";
}

TEST(RegistryTest, ListsTheEightModelsInOrder) {
  std::vector<std::string> names;
  for (const ModelSpec& spec : ZooModels()) names.push_back(spec.name);
  EXPECT_EQ(names, (std::vector<std::string>{"vgg16", "vgg19", "resnet50", "mobilenet", "unet",
                                             "fcn8", "segnet", "transformer"}));
  EXPECT_EQ(FindModel("nope"), nullptr);
  ASSERT_NE(FindModel("mobilenet"), nullptr);
  EXPECT_EQ(FindModel("mobilenet")->default_batch, 512);
}

TEST(RegistryTest, DefaultsAreThePapers) {
  const BuiltModel vgg = BuildModel("vgg16");
  EXPECT_EQ(vgg.info.input_shape, (Shape{256, 224, 224, 3}));
  EXPECT_EQ(vgg.forward.name, "vgg16 (batch 256, 224x224x3)");
  EXPECT_EQ(vgg.forward.cost_unit, "flop");
  EXPECT_EQ(vgg.forward.loss_bytes, 1024);  // one float per sample: 4 * 256
  EXPECT_EQ(BuildModel("segnet").info.input_shape, (Shape{32, 416, 608, 3}));
  EXPECT_EQ(BuildModel("mobilenet").info.batch, 512);
  EXPECT_EQ(BuildModel("transformer").info.input_shape, (Shape{8, 1024}));
}

TEST(RegistryTest, UnknownModelListsTheKnownOnes) {
  const std::string message = ErrorOf([] { BuildModel("vgg17"); });
  EXPECT_NE(message.find("unknown model 'vgg17'"), std::string::npos) << message;
  EXPECT_NE(message.find("vgg16, vgg19, resnet50, mobilenet, unet, fcn8, segnet, transformer"),
            std::string::npos)
      << message;
}

TEST(RegistryTest, OptionsForTheOtherKindOfModelAreRejected) {
  EXPECT_NE(ErrorOf([] { BuildModel("vgg16", {.seq_length = 128}); }).find("does not apply"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] {
              BuildModel("transformer", {.resolution = Resolution{32, 32}});
            }).find("does not apply"),
            std::string::npos);
}

TEST(RegistryTest, NonPositiveSizesAreRejected) {
  EXPECT_THROW(BuildModel("vgg16", {.batch = 0}), InputError);
  EXPECT_THROW(BuildModel("vgg16", {.resolution = Resolution{0, 224}}), InputError);
  EXPECT_THROW(BuildModel("transformer", {.heads = 0}), InputError);
  // 768 is not a multiple of 7 heads.
  EXPECT_THROW(BuildModel("transformer", {.heads = 7}), InputError);
}

TEST(RegistryTest, ResolutionTheNetworkCannotTakeNamesTheLayer) {
  // The pools give 100, 50, 25 and 12 rows: upsampling f4 gives 24 rows against f3's 25.
  const std::string message = ErrorOf([] {
    BuildModel("unet", {.resolution = Resolution{200, 200}});
  });
  EXPECT_NE(message.find("unet at 200x200"), std::string::npos) << message;
  EXPECT_NE(message.find("concatenate"), std::string::npos) << message;
  // Five 2x2 pools need at least 32 pixels.
  EXPECT_NE(ErrorOf([] {
              BuildModel("vgg16", {.resolution = Resolution{16, 16}});
            }).find("block5_pool"),
            std::string::npos);
}

TEST(RegistryTest, SmallTransformerHasTheBlockFormula) {
  const Graph graph = BuildModelTrainingGraph(
      "transformer",
      {.batch = 2, .seq_length = 16, .layers = 2, .hidden = 32, .heads = 4, .vocab = 50});
  // f = 1 + 12*2 + 2 = 27 layers, e = 15*2 + 2 = 32 edges: 55 nodes, 96 + 27 + 2 = 125 edges
  // of docs/design.md §1, plus 2 per block from attn_context's product rule (qkv -> bwd(softmax),
  // softmax -> bwd(qkv)): 129 edges.
  EXPECT_EQ(graph.size(), 55);
  EXPECT_EQ(graph.edges().size(), 129u);
  EXPECT_EQ(graph.name(), "transformer (batch 2, seq 16, 2 layers, hidden 32, 4 heads)");
}

// Bytes of every node, the loss and the input grow exactly linearly with the batch; so do
// FLOPs (every layer's count has the batch as a factor). So do costs, except where a kernel's
// traffic includes weights, which do not scale: there the cost grows less than linearly.
class BatchLinearityTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BatchLinearityTest, BytesAndFlopsScaleWithBatch) {
  const std::string model = GetParam();
  ModelOptions one{.batch = 1};
  ModelOptions three{.batch = 3};
  if (model == "transformer") {
    one.seq_length = three.seq_length = 64;
    one.layers = three.layers = 2;
  }
  const BuiltModel a = BuildModel(model, one);
  const BuiltModel b = BuildModel(model, three);
  ASSERT_EQ(a.forward.nodes.size(), b.forward.nodes.size());
  for (size_t i = 0; i < a.forward.nodes.size(); ++i) {
    EXPECT_EQ(3 * a.forward.nodes[i].bytes, b.forward.nodes[i].bytes) << a.forward.nodes[i].name;
    EXPECT_DOUBLE_EQ(3 * a.info.layers[i].flops, b.info.layers[i].flops)
        << a.forward.nodes[i].name;
    if (a.info.layers[i].weights_read == 0) {
      EXPECT_DOUBLE_EQ(3 * a.forward.nodes[i].cost, b.forward.nodes[i].cost)
          << a.forward.nodes[i].name;
    } else {
      EXPECT_LE(b.forward.nodes[i].cost, 3 * a.forward.nodes[i].cost) << a.forward.nodes[i].name;
      EXPECT_GE(b.forward.nodes[i].cost, a.forward.nodes[i].cost) << a.forward.nodes[i].name;
    }
  }
  EXPECT_EQ(3 * a.forward.loss_bytes, b.forward.loss_bytes);
  EXPECT_EQ(3 * a.info.input_bytes, b.info.input_bytes);
  EXPECT_EQ(a.info.parameters, b.info.parameters);
  EXPECT_EQ(a.forward.edges, b.forward.edges);
}

INSTANTIATE_TEST_SUITE_P(AllModels, BatchLinearityTest,
                         ::testing::Values("vgg16", "vgg19", "resnet50", "mobilenet", "unet",
                                           "fcn8", "segnet", "transformer"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace remat
