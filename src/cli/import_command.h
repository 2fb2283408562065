// remat import: an ONNX model to a remat graph file, and the --onnx source of other verbs.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "cli/zoo_commands.h"
#include "onnx/onnx_import.h"

namespace remat {

// Adds `import MODEL.onnx [--batch N] [--unknown-ops error|zero-cost] -o FILE`.
void AddImportCommand(CLI::App& app, int& exit_code);

// The importer's options from the command line: --batch, --cost-model, --device and
// --workspace of `args` and --unknown-ops. UsageError for a zoo-only option (resolution,
// classes, transformer sizes), an unknown cost model or --unknown-ops value, roofline without
// a device, or --workspace cpu; InputError for an unknown device.
OnnxImportOptions ToOnnxImportOptions(const ZooModelArgs& args, const std::string& unknown_ops);

// --workspace of `args` for the importer: portable when absent; UsageError for cpu.
WorkspaceModel ToOnnxWorkspaceModel(const ZooModelArgs& args);

}  // namespace remat
