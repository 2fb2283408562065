// Hooks through which long planning work (sweeps, max-batch searches) tells its caller what it
// is doing; the CLI draws them as a progress line, Python leaves them empty.
#pragma once

#include <functional>
#include <string>

namespace remat {

struct WorkProgress {
  std::function<void(const std::string& what)> start;  // work on `what` begins
  std::function<void()> finish;                        // one item is done
  void Start(const std::string& what) const {
    if (start) start(what);
  }
  void Finish() const {
    if (finish) finish();
  }
};

}  // namespace remat
