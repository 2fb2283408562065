// Where a command's graph comes from: --graph FILE (remat or node-link JSON), --onnx FILE (an
// ONNX model, imported) or --model NAME with its sizing options (the zoo), and how a budget is
// derived from --budget / --memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/zoo_commands.h"
#include "core/graph.h"
#include "model/fixed_memory.h"
#include "planning/budget.h"

namespace remat {

struct GraphSource {
  std::string graph_path;
  std::string onnx_path;              // imported with zoo.batch, cost model, device, optimizer
  std::string unknown_ops = "error";  // --unknown-ops for --onnx
  ZooModelArgs zoo;  // zoo.model names a zoo model
  std::string costs_path;  // --costs: measured per-node costs (remat-run profile)
  // What to call the source in messages: the file or the model with its batch.
  std::string Describe() const;
  // The files it reads (some empty), which no output may overwrite.
  std::vector<std::string> Files() const { return {graph_path, onnx_path, costs_path}; }
};

struct LoadedGraph {
  Graph graph;
  std::optional<ModelInfo> model;    // zoo models only
  std::optional<FixedMemory> fixed;  // zoo and ONNX models, with the chosen optimizer
};

// Adds --graph, --onnx (with --unknown-ops) and --model with the zoo's sizing options.
void AddGraphSourceOptions(CLI::App& command, GraphSource& source);

// Loads and validates the graph; InputError (exit 3) on a bad file or model, UsageError unless
// exactly one of --graph, --onnx and --model is given.
LoadedGraph LoadGraphSource(const GraphSource& source);

struct BudgetArgs {
  std::string budget_text;  // activation budget
  std::string memory_text;  // device memory; the activation budget is memory - fixed
  std::string fixed_text;   // fixed memory of a graph file (zoo models compute their own)
};

// Adds --budget, --memory and --fixed-memory.
void AddBudgetOptions(CLI::App& command, BudgetArgs& args);

// The request of --budget, --memory, --fixed-memory and --device for planning's
// ResolveBudget: a device preset gives the memory, zoo and ONNX models their fixed memory.
BudgetRequest ToBudgetRequest(const BudgetArgs& args, const GraphSource& source,
                              const LoadedGraph& loaded);

}  // namespace remat
