// Error types shared by every layer: bad input (exit 3) versus internal bugs (exit 70).
#pragma once

#include <stdexcept>
#include <string>

namespace remat {

// Input that the user can fix: a malformed file, an invalid graph, an unknown name.
// The message names the file, the field and what was wrong.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input of one kind: no activation budget can exist (the fixed memory fills the device).
// Python raises it as remat.InfeasibleBudgetError; the CLI treats it as any InputError.
class InfeasibleBudgetError : public InputError {
 public:
  using InputError::InputError;
};

// A command or call that asks for something that does not exist or cannot be combined: an
// unknown strategy, a malformed size, conflicting options. The message names the choices.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A broken invariant inside remat (for example a plan that reads a freed value).
// It is never the user's fault and is reported as an internal error.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace remat
