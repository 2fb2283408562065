// Entry point of remat-run: executes plans of zoo networks on libtorch (CPU), checks them
// against autograd and profiles node costs. Its verbs, options and exit codes are remat's
// (docs/cli.md, "remat-run").
#include <malloc.h>

#include <climits>

#include <CLI/CLI.hpp>

#include "cli/app_main.h"
#include "cli/commands.h"
#include "cli/run_profile_command.h"
#include "cli/run_step_command.h"
#include "cli/run_train_command.h"

int main(int argc, char** argv) {
  using namespace remat;
  // Freed memory stays in the process, as in the caching allocators of training frameworks.
  // By default glibc maps large blocks afresh and returns them on free, so every step paid its
  // page faults again: they dominated and scattered step times (1.2-2.1 s for a 0.45 s VGG16
  // step at 64x64, docs/exec.md). Byte counts are unaffected (the counting allocator wraps c10).
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
  CLI::App app{"remat-run: run rematerialized training steps and profile node costs on libtorch",
               "remat-run"};
  app.set_version_flag("--version", std::string("remat-run ") + REMAT_VERSION);
  app.require_subcommand(1);
  int exit_code = kExitOk;
  AddRunStepCommand(app, exit_code);
  AddRunTrainCommand(app, exit_code);
  AddRunProfileCommand(app, exit_code);
  return RunCommandLine(app, argc, argv, "remat-run", exit_code);
}
