// Entry point of the remat command: parses the verb, runs it and maps failures to exit codes.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/import_command.h"
#include "cli/zoo_commands.h"
#include "core/errors.h"

int main(int argc, char** argv) {
  using namespace remat;
  CLI::App app{"remat: optimal tensor rematerialization for training (Checkmate)", "remat"};
  app.set_version_flag("--version", std::string("remat ") + REMAT_VERSION);
  app.require_subcommand(1);
  int exit_code = kExitOk;
  AddSolveCommand(app, exit_code);
  AddGraphCommands(app, exit_code);
  AddZooCommands(app, exit_code);
  AddSweepCommand(app, exit_code);
  AddMaxBatchCommand(app, exit_code);
  AddApproxReportCommand(app, exit_code);
  AddPlotCommand(app, exit_code);
  AddImportCommand(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? kExitOk : kExitUsage;
  } catch (const UsageError& error) {
    fmt::print(stderr, "remat: usage error: {}\n", error.what());
    return kExitUsage;
  } catch (const InputError& error) {
    fmt::print(stderr, "remat: error: {}\n", error.what());
    return kExitBadInput;
  } catch (const InternalError& error) {
    fmt::print(stderr, "remat: internal error (please report): {}\n", error.what());
    return kExitInternal;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "remat: out of memory\n");
    return kExitInternal;
  } catch (const std::exception& error) {
    fmt::print(stderr, "remat: internal error (please report): {}\n", error.what());
    return kExitInternal;
  }
  return exit_code;
}
