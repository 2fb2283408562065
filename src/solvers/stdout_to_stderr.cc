// dup2 of stderr over stdout, undone on destruction (after flushing both C and C++ streams).
#include "solvers/stdout_to_stderr.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace remat {

StdoutToStderr::StdoutToStderr() {
  std::cout.flush();
  std::fflush(stdout);
  saved_ = ::dup(STDOUT_FILENO);
  if (saved_ >= 0) ::dup2(STDERR_FILENO, STDOUT_FILENO);
}

StdoutToStderr::~StdoutToStderr() {
  std::cout.flush();
  std::fflush(stdout);
  if (saved_ >= 0) {
    ::dup2(saved_, STDOUT_FILENO);
    ::close(saved_);
  }
}

}  // namespace remat
