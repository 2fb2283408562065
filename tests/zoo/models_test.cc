#include <gtest/gtest.h>
#include <fmt/format.h>
#include "zoo/registry.h"
namespace remat {
TEST(Probe, Counts) {
  for (const ModelSpec& s : ZooModels()) {
    BuiltModel m = BuildModel(s.name);
    Graph g = BuildTrainingGraph(m.forward);
    fmt::print("{} {} nodes {} edges params {} trainable {} out {}\n", s.name, g.size(), g.edges().size(), m.info.parameters, m.info.trainable_parameters, FormatShape(m.info.output_shape));
  }
}
}
