// Entry point of the remat command: parses the verb, runs it and maps failures to exit codes.
#include <CLI/CLI.hpp>

#include "cli/app_main.h"
#include "cli/approx_report_command.h"
#include "cli/commands.h"
#include "cli/graph_commands.h"
#include "cli/import_command.h"
#include "cli/maxbatch_command.h"
#include "cli/plot_command.h"
#include "cli/show_command.h"
#include "cli/solve_command.h"
#include "cli/sweep_command.h"
#include "cli/zoo_commands.h"

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
  AddShowCommand(app, exit_code);
  AddImportCommand(app, exit_code);
  return RunCommandLine(app, argc, argv, "remat", exit_code);
}
