// The model zoo by name: build a named network at a batch size and resolution as a forward
// graph (with its parameter count and input size) or directly as a training graph.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/training_graph.h"
#include "model/cost_model.h"
#include "model/devices.h"
#include "model/model_info.h"
#include "model/network_builder.h"
#include "zoo/networks.h"

namespace remat {

struct Resolution {
  int64_t height = 0;
  int64_t width = 0;
};

// A model's name and the sizes it is built at unless told otherwise (the paper's settings).
struct ModelSpec {
  std::string name;  // "vgg16", "resnet50", ...
  std::string description;
  bool is_transformer = false;
  int64_t default_batch = 1;
  Resolution default_resolution;          // image models; the input is height x width x 3
  int64_t default_classes = 0;            // image models
  TransformerConfig default_transformer;  // the transformer
};

// In display order: vgg16, vgg19, resnet50, mobilenet, unet, fcn8, segnet, transformer.
const std::vector<ModelSpec>& ZooModels();
// nullptr when no model has that name.
const ModelSpec* FindModel(const std::string& name);
// The model with that name; InputError listing the known names otherwise.
const ModelSpec& ModelByName(const std::string& name);

// Every field left empty takes the model's default. Resolution and classes apply to image
// models, the transformer fields to the transformer; giving one to the other kind of model
// is an InputError.
struct ModelOptions {
  std::optional<int64_t> batch;
  std::optional<Resolution> resolution;
  std::optional<int64_t> classes;
  std::optional<int64_t> seq_length;
  std::optional<int64_t> layers;
  std::optional<int64_t> hidden;
  std::optional<int64_t> heads;
  std::optional<int64_t> vocab;
  CostModel cost_model = CostModel::kFlops;
  std::optional<DeviceSpec> device;  // required by CostModel::kRoofline
  // The nodes' workspace estimates; empty: kPortable with a device, kLibtorchCpu without.
  std::optional<WorkspaceModel> workspace;
};

// The network itself, layer by layer, at the options' sizes (the cost model is not read).
NetworkBuilder BuildNetwork(const std::string& name, const ModelOptions& options = {});

// Throws InputError for an unknown name, a non-positive size, options that do not apply to
// the model, a resolution the network cannot take (message names the layer), or kRoofline
// without a device.
BuiltModel BuildModel(const std::string& name, const ModelOptions& options = {});
// BuildTrainingGraph(BuildModel(name, options).forward): docs/design.md §1's training graph.
Graph BuildModelTrainingGraph(const std::string& name, const ModelOptions& options = {});

}  // namespace remat
