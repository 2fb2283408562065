// Solver logs go to stderr: CBC's driver and CLP print with printf and std::cout, but only the
// command line writes to stdout (it may be JSON), so file descriptor 1 points at stderr for
// the lifetime of one of these objects.
#pragma once

namespace remat {

class StdoutToStderr {
 public:
  StdoutToStderr();
  ~StdoutToStderr();
  StdoutToStderr(const StdoutToStderr&) = delete;
  StdoutToStderr& operator=(const StdoutToStderr&) = delete;

 private:
  int saved_ = -1;
};

}  // namespace remat
