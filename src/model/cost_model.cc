// The FLOP and roofline cost models and the network-to-forward-graph conversion.
#include "model/cost_model.h"

#include <algorithm>

#include "core/errors.h"

namespace remat {

const char* CostModelName(CostModel model) {
  return model == CostModel::kFlops ? "flops" : "roofline";
}

std::optional<CostModel> ParseCostModel(const std::string& name) {
  if (name == "flops") return CostModel::kFlops;
  if (name == "roofline") return CostModel::kRoofline;
  return std::nullopt;
}

const char* CostUnit(CostModel model) { return model == CostModel::kFlops ? "flop" : "ms"; }

int64_t LayerBytesMoved(const NetworkBuilder& net, int32_t layer) {
  return ForwardWork(net, layer).bytes_moved;
}

double RooflineMs(double flops, int64_t bytes_moved, const DeviceSpec& device) {
  const double compute_s = flops / device.peak_flops_per_s;
  const double memory_s = static_cast<double>(bytes_moved) / device.bandwidth_bytes_per_s;
  return std::max(compute_s, memory_s) * 1e3;
}

double KernelCost(CostModel model, const KernelWork& work, const DeviceSpec* device) {
  if (model == CostModel::kFlops) {
    return std::max(work.flops,
                    kFlopsPerElementMoved * static_cast<double>(work.bytes_moved / kElementBytes));
  }
  return RooflineMs(work.flops, work.bytes_moved, *device);
}

ForwardGraph ToForwardGraph(const NetworkBuilder& net, std::string graph_name, CostModel model,
                            const DeviceSpec* device, std::optional<WorkspaceModel> chosen) {
  if (model == CostModel::kRoofline && device == nullptr) {
    throw InputError("the roofline cost model needs a device (--device)");
  }
  ForwardGraph forward{.name = std::move(graph_name), .cost_unit = CostUnit(model)};
  // The device presets are GPUs; without one the graph is for remat-run's CPU executor.
  const WorkspaceModel workspace =
      chosen.value_or(device ? WorkspaceModel::kPortable : WorkspaceModel::kLibtorchCpu);
  const std::vector<Layer>& layers = net.layers();
  for (int32_t id = 0; id < static_cast<int32_t>(layers.size()); ++id) {
    const Layer& layer = layers[id];
    double backward_cost = 0;
    for (const BackwardKernel& kernel : BackwardKernels(net, id)) {
      backward_cost += KernelCost(model, kernel.work, device);
    }
    forward.nodes.push_back({.name = layer.name,
                             .cost = KernelCost(model, ForwardWork(net, id), device),
                             .bytes = layer.output_bytes(),
                             .backward_cost = backward_cost,
                             .workspace_bytes = ForwardWorkspaceBytes(net, id, workspace),
                             .backward_workspace_bytes = BackwardWorkspaceBytes(net, id, workspace),
                             .backward_reads_inputs = layer.backward_reads_inputs,
                             .block = layer.block,
                             .contraction = IsContraction(layer.kind)});
    std::vector<int32_t> sources;
    for (int32_t input : layer.inputs) {
      if (input != NetworkBuilder::kInput) sources.push_back(input);
    }
    std::sort(sources.begin(), sources.end());
    sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
    for (int32_t src : sources) forward.edges.push_back({src, id});
  }
  forward.loss_bytes = net.batch() * kElementBytes;  // one float per sample (docs/design.md §1)
  forward.loss_cost = 0.0;
  return forward;
}

}  // namespace remat
