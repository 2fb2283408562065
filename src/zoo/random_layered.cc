// Random layered DAGs: layer-by-layer numbering, one guaranteed edge from the previous layer,
// Bernoulli extra edges within a span of layers.
#include "zoo/random_layered.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "core/errors.h"

namespace remat {
namespace {

// SplitMix64: a tiny generator whose output is fixed by its definition, unlike
// std::uniform_int_distribution, so graphs are identical across standard libraries.
class Stream {
 public:
  explicit Stream(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi] (the modulo bias is below 2^-40 for the ranges used here).
  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

void Check(const RandomLayeredOptions& o) {
  auto fail = [](const std::string& what) { throw UsageError("random-layered: " + what); };
  if (o.nodes < 1 || o.nodes > 1'000'000) fail("--nodes must be in 1..1000000");
  if (o.width < 1) fail("--width must be at least 1");
  if (o.span < 1) fail("--span must be at least 1");
  if (o.edges < 0) fail("--edges must not be negative");
  if (o.min_cost < 0 || o.max_cost < o.min_cost) fail("costs need 0 <= min <= max");
  if (o.min_bytes < 1 || o.max_bytes < o.min_bytes || o.max_bytes > (int64_t{1} << 40)) {
    fail("bytes need 1 <= min <= max <= 1 TiB");
  }
}

}  // namespace

Graph RandomLayeredGraph(const RandomLayeredOptions& o) {
  Check(o);
  Stream rng(o.seed);
  const int32_t n = o.nodes;
  auto layer_of = [&](int32_t v) { return v / o.width; };
  auto layer_begin = [&](int32_t layer) { return std::min(n, layer * o.width); };

  // Candidates of v beyond its guaranteed input: every node of the `span` layers before it.
  int64_t candidates = 0, non_sources = 0;
  for (int32_t v = o.width; v < n; ++v) {
    candidates += layer_begin(layer_of(v)) - layer_begin(std::max(0, layer_of(v) - o.span)) - 1;
    ++non_sources;
  }
  const double extra = static_cast<double>(std::max<int64_t>(0, o.edges - non_sources));
  const double p = candidates > 0 ? std::min(1.0, extra / static_cast<double>(candidates)) : 0.0;

  std::vector<Node> nodes;
  std::vector<Edge> edges;
  nodes.reserve(n);
  const int64_t byte_steps = o.max_bytes / o.min_bytes;
  for (int32_t v = 0; v < n; ++v) {
    nodes.push_back({.name = fmt::format("n{}", v),
                     .kind = NodeKind::kUnlabeled,
                     .cost = static_cast<double>(rng.Between(o.min_cost, o.max_cost)),
                     .bytes = o.min_bytes * rng.Between(1, byte_steps)});
    const int32_t layer = layer_of(v);
    if (layer == 0) continue;
    const int32_t prev_begin = layer_begin(layer - 1), prev_end = layer_begin(layer);
    const int32_t guaranteed = static_cast<int32_t>(rng.Between(prev_begin, prev_end - 1));
    for (int32_t u = layer_begin(std::max(0, layer - o.span)); u < prev_end; ++u) {
      if (u == guaranteed || rng.Unit() < p) edges.push_back({u, v});
    }
  }
  return Graph(std::move(nodes), std::move(edges), "unit",
               fmt::format("random-layered(nodes={}, width={}, edges~{}, span={}, seed={})", n,
                           o.width, o.edges, o.span, o.seed));
}

}  // namespace remat
