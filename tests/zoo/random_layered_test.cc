// Random layered DAGs: reproducible, layered as documented, close to the requested density.
#include "zoo/random_layered.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/graph_json.h"

namespace remat {
namespace {

TEST(RandomLayeredTest, SameOptionsSameGraphOtherSeedOtherGraph) {
  const Graph a = RandomLayeredGraph({.nodes = 300, .seed = 7});
  const Graph b = RandomLayeredGraph({.nodes = 300, .seed = 7});
  const Graph c = RandomLayeredGraph({.nodes = 300, .seed = 8});
  EXPECT_EQ(GraphFingerprint(a), GraphFingerprint(b));
  EXPECT_NE(GraphFingerprint(a), GraphFingerprint(c));
}

// Every node outside layer 0 reads a node of the previous layer; no edge reaches back more
// than `span` layers or stays inside a layer; costs and bytes lie in their ranges.
TEST(RandomLayeredTest, LayersSpanAndRanges) {
  const RandomLayeredOptions o{.nodes = 1000, .width = 10, .edges = 6000, .span = 3, .seed = 3};
  const Graph g = RandomLayeredGraph(o);
  ASSERT_EQ(g.size(), 1000);
  for (int32_t v = 0; v < g.size(); ++v) {
    const int32_t layer = v / o.width;
    bool from_previous = false;
    for (int32_t u : g.preds(v)) {
      const int32_t from = u / o.width;
      EXPECT_LT(from, layer) << u << " -> " << v;
      EXPECT_LE(layer - from, o.span) << u << " -> " << v;
      from_previous |= from == layer - 1;
    }
    EXPECT_EQ(from_previous, layer > 0) << v;
    EXPECT_GE(g.node(v).cost, o.min_cost);
    EXPECT_LE(g.node(v).cost, o.max_cost);
    EXPECT_GE(g.node(v).bytes, o.min_bytes);
    EXPECT_LE(g.node(v).bytes, o.max_bytes);
    EXPECT_EQ(g.node(v).bytes % o.min_bytes, 0);
  }
  // 990 guaranteed edges plus ~5,010 Bernoulli ones (sd ~ 65): within 5% of 6,000.
  EXPECT_NEAR(static_cast<double>(g.edges().size()), 6000.0, 300.0);
}

TEST(RandomLayeredTest, InconsistentOptionsAreUsageErrors) {
  EXPECT_THROW(RandomLayeredGraph({.nodes = 0}), UsageError);
  EXPECT_THROW(RandomLayeredGraph({.min_cost = 5, .max_cost = 1}), UsageError);
  EXPECT_THROW(RandomLayeredGraph({.min_bytes = 0}), UsageError);
  EXPECT_THROW(RandomLayeredGraph({.width = 0}), UsageError);
}

}  // namespace
}  // namespace remat
