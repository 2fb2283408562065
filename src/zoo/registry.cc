// The zoo's model table, option checking and the build entry points.
#include "zoo/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.h"
#include "zoo/mobilenet.h"
#include "zoo/resnet.h"
#include "zoo/segmentation.h"
#include "zoo/transformer.h"
#include "zoo/vgg.h"

namespace remat {
namespace {

constexpr int64_t kMaxDimension = int64_t{1} << 24;  // keeps shape arithmetic far from overflow

ModelSpec Image(std::string name, std::string description, int64_t batch, Resolution resolution,
                int64_t classes) {
  return {.name = std::move(name),
          .description = std::move(description),
          .default_batch = batch,
          .default_resolution = resolution,
          .default_classes = classes};
}

int64_t Positive(const std::string& model, const char* what, int64_t value) {
  if (value < 1 || value > kMaxDimension) {
    throw InputError(
        fmt::format("{}: {} must be between 1 and {}, got {}", model, what, kMaxDimension, value));
  }
  return value;
}

void RejectFor(const std::string& model, const char* kind, const char* what, bool given) {
  if (given) {
    throw InputError(fmt::format("{}: {} does not apply to {} models", model, what, kind));
  }
}

NetworkBuilder BuildImageNetwork(const std::string& name, const ImageConfig& config) {
  if (name == "vgg16") return BuildVgg(16, config);
  if (name == "vgg19") return BuildVgg(19, config);
  if (name == "resnet50") return BuildResNet50(config);
  if (name == "mobilenet") return BuildMobileNetV1(config);
  if (name == "unet") return BuildVggUNet(config);
  if (name == "fcn8") return BuildFcn8Vgg(config);
  if (name == "segnet") return BuildSegNet(config);
  throw InternalError(fmt::format("no builder for image model '{}'", name));
}

}  // namespace

const std::vector<ModelSpec>& ZooModels() {
  static const std::vector<ModelSpec> models = [] {
    const Resolution imagenet{224, 224};
    const Resolution segmentation{416, 608};  // keras_segmentation's default, the paper's
    std::vector<ModelSpec> list = {
        Image("vgg16", "VGG16, ImageNet classifier (keras.applications)", 256, imagenet, 1000),
        Image("vgg19", "VGG19, ImageNet classifier (keras.applications)", 256, imagenet, 1000),
        Image("resnet50", "ResNet50, bottleneck blocks (keras.applications)", 256, imagenet, 1000),
        Image("mobilenet", "MobileNet v1, width 1.0 (keras.applications)", 512, imagenet, 1000),
        Image("unet", "U-Net with a VGG16 encoder (keras_segmentation vgg_unet)", 32, segmentation,
              19),
        Image("fcn8", "FCN-8 with a VGG16 encoder (keras_segmentation fcn_8_vgg)", 32, segmentation,
              19),
        Image("segnet", "SegNet, vanilla encoder (keras_segmentation segnet)", 32, segmentation,
              19),
    };
    list.push_back({.name = "transformer",
                    .description = "GPT-2 style decoder (default GPT-2 small)",
                    .is_transformer = true,
                    .default_batch = 8});
    return list;
  }();
  return models;
}

const ModelSpec* FindModel(const std::string& name) {
  for (const ModelSpec& spec : ZooModels()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

const ModelSpec& ModelByName(const std::string& name) {
  if (const ModelSpec* spec = FindModel(name)) return *spec;
  std::vector<std::string> names;
  for (const ModelSpec& spec : ZooModels()) names.push_back(spec.name);
  throw InputError(
      fmt::format("unknown model '{}'; known models: {}", name, fmt::join(names, ", ")));
}

namespace {

// The network at the options' sizes, and the name its graph gets.
NetworkBuilder BuildNamedNetwork(const std::string& name, const ModelOptions& options,
                                 std::string& graph_name) {
  const ModelSpec& spec = ModelByName(name);
  const int64_t batch =
      Positive(name, "the batch size", options.batch.value_or(spec.default_batch));
  std::optional<NetworkBuilder> net;
  if (spec.is_transformer) {
    RejectFor(name, "transformer", "a resolution", options.resolution.has_value());
    RejectFor(name, "transformer", "a class count", options.classes.has_value());
    const TransformerConfig& d = spec.default_transformer;
    const TransformerConfig config = {
        .layers = Positive(name, "the layer count", options.layers.value_or(d.layers)),
        .hidden = Positive(name, "the hidden size", options.hidden.value_or(d.hidden)),
        .heads = Positive(name, "the head count", options.heads.value_or(d.heads)),
        .seq_length =
            Positive(name, "the sequence length", options.seq_length.value_or(d.seq_length)),
        .vocab = Positive(name, "the vocabulary size", options.vocab.value_or(d.vocab))};
    if (config.hidden % config.heads != 0) {
      throw InputError(fmt::format("{}: the hidden size {} is not a multiple of the head count {}",
                                   name, config.hidden, config.heads));
    }
    net.emplace(BuildTransformer(batch, config));
    graph_name = fmt::format("{} (batch {}, seq {}, {} layers, hidden {}, {} heads)", name, batch,
                             config.seq_length, config.layers, config.hidden, config.heads);
  } else {
    const char* kind = "image";
    RejectFor(name, kind, "a sequence length", options.seq_length.has_value());
    RejectFor(name, kind, "a layer count", options.layers.has_value());
    RejectFor(name, kind, "a hidden size", options.hidden.has_value());
    RejectFor(name, kind, "a head count", options.heads.has_value());
    RejectFor(name, kind, "a vocabulary size", options.vocab.has_value());
    const Resolution resolution = options.resolution.value_or(spec.default_resolution);
    const ImageConfig config = {
        .batch = batch,
        .height = Positive(name, "the height", resolution.height),
        .width = Positive(name, "the width", resolution.width),
        .classes =
            Positive(name, "the class count", options.classes.value_or(spec.default_classes))};
    try {
      net.emplace(BuildImageNetwork(name, config));
    } catch (const InputError& error) {
      // "unet: layer 'x': ..." becomes "unet at 200x200: layer 'x': ...".
      std::string what = error.what();
      if (what.rfind(name + ": ", 0) == 0) what.erase(0, name.size() + 2);
      const char* hint = name == "unet" ? " (U-Net's skip connections need a height and width "
                                          "divisible by 16)"
                                        : "";
      throw InputError(
          fmt::format("{} at {}x{}: {}{}", name, config.height, config.width, what, hint));
    }
    graph_name = fmt::format("{} (batch {}, {}x{}x3)", name, batch, config.height, config.width);
  }
  return std::move(*net);
}

}  // namespace

NetworkBuilder BuildNetwork(const std::string& name, const ModelOptions& options) {
  std::string graph_name;
  return BuildNamedNetwork(name, options, graph_name);
}

BuiltModel BuildModel(const std::string& name, const ModelOptions& options) {
  ModelByName(name);  // an unknown name first
  if (options.cost_model == CostModel::kRoofline && !options.device) {
    throw InputError("the roofline cost model needs a device (--device)");
  }
  if (options.device &&
      (!(options.device->peak_flops_per_s > 0) || !(options.device->bandwidth_bytes_per_s > 0))) {
    throw InputError(
        fmt::format("device '{}': peak FLOP/s and bandwidth must be > 0", options.device->name));
  }
  std::string graph_name;
  const NetworkBuilder built_net = BuildNamedNetwork(name, options, graph_name);
  return {.forward = ToForwardGraph(built_net, graph_name, options.cost_model,
                                    options.device ? &*options.device : nullptr,
                                    options.workspace),
          .info = DescribeNetwork(built_net, name)};
}

Graph BuildModelTrainingGraph(const std::string& name, const ModelOptions& options) {
  return BuildTrainingGraph(BuildModel(name, options).forward);
}

}  // namespace remat
