// The zoo's paper networks against testdata/paper-networks.md (the paper's Keras models'
// layers and wiring): the same layer names in the same order and exactly the
// forward edges listed there (i -> i+1 unless excluded, plus the extra edges).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "zoo/registry.h"

namespace remat {
namespace {

struct PaperNetwork {
  std::vector<std::string> layers;
  std::set<std::pair<int32_t, int32_t>> edges;
};

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    item.erase(0, item.find_first_not_of(' '));
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// Reads the section whose heading starts with "## <heading> (".
PaperNetwork ReadPaperNetwork(const std::string& heading) {
  std::ifstream file(std::string(REMAT_ZOO_TESTDATA) + "/paper-networks.md");
  EXPECT_TRUE(file.good()) << "cannot read testdata/paper-networks.md";
  PaperNetwork network;
  std::set<int32_t> no_next;
  std::set<std::pair<int32_t, int32_t>> extra;
  bool inside = false;
  std::string line;
  while (std::getline(file, line)) {
    if (line.rfind("## ", 0) == 0) inside = line.rfind("## " + heading + " (", 0) == 0;
    if (!inside) continue;
    const auto after = [&](const std::string& prefix) -> std::optional<std::string> {
      if (line.rfind(prefix, 0) != 0) return std::nullopt;
      return line.substr(prefix.size());
    };
    if (auto list = after("- layers: ")) {
      for (const std::string& item : SplitList(*list)) {
        network.layers.push_back(item.substr(item.find(' ') + 1));  // "12 conv2d_1"
      }
    } else if (auto list = after("- extra edges: ")) {
      for (const std::string& item : SplitList(*list)) {
        const size_t arrow = item.find("->");
        extra.insert({std::stoi(item.substr(0, arrow)), std::stoi(item.substr(arrow + 2))});
      }
    } else if (auto list = after("- no edge from i to i+1 for i in: ")) {
      for (const std::string& item : SplitList(*list)) no_next.insert(std::stoi(item));
    }
  }
  EXPECT_FALSE(network.layers.empty()) << "no section '" << heading << "'";
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(network.layers.size()); ++i) {
    if (!no_next.contains(i)) network.edges.insert({i, i + 1});
  }
  network.edges.insert(extra.begin(), extra.end());
  return network;
}

void ExpectPaperWiring(const std::string& model, const std::string& heading) {
  const PaperNetwork paper = ReadPaperNetwork(heading);
  const ForwardGraph forward = BuildModel(model).forward;
  std::vector<std::string> names;
  for (const ForwardNode& node : forward.nodes) names.push_back(node.name);
  EXPECT_EQ(names, paper.layers);
  std::set<std::pair<int32_t, int32_t>> edges;
  for (const Edge& edge : forward.edges) edges.insert({edge.src, edge.dst});
  EXPECT_EQ(edges.size(), forward.edges.size()) << "duplicate forward edges";
  EXPECT_EQ(edges, paper.edges);
}

TEST(PaperWiringTest, Vgg16) { ExpectPaperWiring("vgg16", "VGG16"); }
TEST(PaperWiringTest, Vgg19) { ExpectPaperWiring("vgg19", "VGG19"); }
TEST(PaperWiringTest, ResNet50) { ExpectPaperWiring("resnet50", "ResNet50"); }
TEST(PaperWiringTest, MobileNet) { ExpectPaperWiring("mobilenet", "MobileNet v1"); }
TEST(PaperWiringTest, UNet) { ExpectPaperWiring("unet", "U-Net with VGG encoder"); }
TEST(PaperWiringTest, Fcn8) { ExpectPaperWiring("fcn8", "FCN-8 with VGG encoder"); }
TEST(PaperWiringTest, SegNet) { ExpectPaperWiring("segnet", "SegNet"); }

}  // namespace
}  // namespace remat
