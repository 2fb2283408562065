// Exit codes and error messages shared by remat and remat-run (STYLE.md, docs/cli.md).
#include "cli/app_main.h"

#include <cstdio>
#include <exception>
#include <new>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/errors.h"

namespace remat {

int RunCommandLine(CLI::App& app, int argc, char** argv, const std::string& program,
                   const int& exit_code) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? kExitOk : kExitUsage;
  } catch (const UsageError& error) {
    fmt::print(stderr, "{}: usage error: {}\n", program, error.what());
    return kExitUsage;
  } catch (const InputError& error) {
    fmt::print(stderr, "{}: error: {}\n", program, error.what());
    return kExitBadInput;
  } catch (const InternalError& error) {
    fmt::print(stderr, "{}: internal error (please report): {}\n", program, error.what());
    return kExitInternal;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "{}: out of memory\n", program);
    return kExitInternal;
  } catch (const std::exception& error) {
    fmt::print(stderr, "{}: internal error (please report): {}\n", program, error.what());
    return kExitInternal;
  }
  return exit_code;
}

}  // namespace remat
