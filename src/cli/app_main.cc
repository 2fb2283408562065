// Exit codes and error messages shared by remat and remat-run (STYLE.md, docs/cli.md).
#include "cli/app_main.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/errors.h"

namespace remat {
namespace {

// Memory kept back for unwinding after an allocation fails. Destructors allocate too: a large
// nlohmann::json frees its nested values through a stack it reserves, and an allocation that
// fails inside a destructor ends the process (std::terminate, SIGABRT) instead of reaching the
// "out of memory" message. The first failed allocation releases this block and throws, so the
// unwinding that follows has room. Never written, so it costs address space, not memory; under
// a tight address-space limit a smaller block is kept (destroying a document needs about 16
// bytes per element of its largest array: 48 MB for three million edges).
constexpr size_t kUnwindReserveBytes[] = {size_t{256} << 20, size_t{64} << 20,
                                          size_t{16} << 20, size_t{4} << 20};
void* unwind_reserve = nullptr;

void ReleaseReserveAndThrow() {
  std::free(unwind_reserve);
  unwind_reserve = nullptr;
  std::set_new_handler(nullptr);
  throw std::bad_alloc();
}

const char* program_name = "remat";
std::terminate_handler default_terminate = nullptr;

// Where the reserve is too small (destroying a document of hundreds of millions of elements
// needs gigabytes), an allocation fails inside a destructor, which may not throw: the runtime
// calls std::terminate with that std::bad_alloc as the current exception. It is still "out of
// memory", exit 70, whatever thread it happens in; any other reason keeps the default (abort).
// Nothing here allocates: the message goes out with write(2).
[[noreturn]] void OutOfMemoryOrAbort() {
  if (const std::exception_ptr current = std::current_exception()) {
    try {
      std::rethrow_exception(current);
    } catch (const std::bad_alloc&) {
      char message[160];
      const int length = std::snprintf(message, sizeof message,
                                       "%s: out of memory (exit %d); try a smaller graph or more "
                                       "memory\n",
                                       program_name, kExitInternal);
      if (length > 0) {
        [[maybe_unused]] const ssize_t written =
            ::write(STDERR_FILENO, message, static_cast<size_t>(length));
      }
      ::_exit(kExitInternal);
    } catch (...) {
    }
  }
  if (default_terminate != nullptr) default_terminate();
  std::abort();
}

}  // namespace

int RunCommandLine(CLI::App& app, int argc, char** argv, const std::string& program,
                   const int& exit_code) {
  for (const size_t bytes : kUnwindReserveBytes) {
    if ((unwind_reserve = std::malloc(bytes)) != nullptr) break;
  }
  if (unwind_reserve != nullptr) std::set_new_handler(ReleaseReserveAndThrow);
  program_name = program == "remat-run" ? "remat-run" : "remat";
  default_terminate = std::set_terminate(OutOfMemoryOrAbort);
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
    fmt::print(stderr, "{}: out of memory (exit {}); try a smaller graph or more memory\n",
               program, kExitInternal);
    return kExitInternal;
  } catch (const std::exception& error) {
    fmt::print(stderr, "{}: internal error (please report): {}\n", program, error.what());
    return kExitInternal;
  }
  return exit_code;
}

}  // namespace remat
