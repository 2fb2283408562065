// What both commands (remat and remat-run) do around their verbs: parse, run, and map every
// failure to the exit codes of cli/commands.h with one message on stderr.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace remat {

// Parses argv into `app` (whose subcommand callbacks run the verbs and store their exit code
// in `exit_code`) and returns the process's exit code. `program` prefixes the messages.
int RunCommandLine(CLI::App& app, int argc, char** argv, const std::string& program,
                   const int& exit_code);

}  // namespace remat
