// A hard wall-clock guard around CBC: the solve runs in a forked child that streams every
// incumbent and its final result through a pipe. CBC checks its time limit only in some
// phases (a MobileNet solve limited to 30 s ran 305 s) and CBC 2.10.8 can crash; the parent
// kills the child at the deadline and keeps the last incumbent, so neither a stuck nor a
// crashed solver takes the program down or loses a solution it found. The child never outlives
// its parent: it dies with it however the parent ends (signal, SIGKILL, crash), and a cancelled
// call (core/cancellation.h) kills it as the deadline does.
#include "solvers/cbc_mip.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "core/cancellation.h"
#include "solvers/cbc_in_process.h"

namespace remat {
namespace {

// Frames on the pipe: a one-byte tag, then fixed fields, then a payload.
constexpr char kSolution = 'S';  // double objective, int32 count, count doubles
constexpr char kResult = 'R';    // int32 status, double objective, bound, seconds,
                                 // int64 nodes, int32 values, doubles, int32 len, message

void WriteAll(int fd, const void* data, size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = ::write(fd, bytes, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      ::_exit(3);  // the parent is gone: nothing left to do
    }
    bytes += written;
    size -= static_cast<size_t>(written);
  }
}

template <typename T>
void Put(int fd, const T& value) {
  WriteAll(fd, &value, sizeof value);
}

// Ties the child's life to its parent's: the kernel sends SIGKILL when the forking thread
// ends, and a parent that died before that request (the child then has another parent) ends
// the child at once. SIGINT and SIGTERM take their default action, not handlers inherited
// from the parent (a Python interpreter's only set a flag that nobody in the child reads);
// CBC's driver installs its own SIGINT handler, which stops the search, and the parent's
// death still kills the child.
void DieWithParent(pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(4);
  for (int sig : {SIGINT, SIGTERM}) ::signal(sig, SIG_DFL);
}

[[noreturn]] void RunChild(int fd, const LinearModel& model, const std::vector<double>& start,
                           const MipOptions& options, pid_t parent) {
  DieWithParent(parent);
  // The child only runs CBC. If CBC crashes, the child must die quietly (the parent reports
  // it) instead of running handlers inherited from the parent: a Python interpreter's
  // faulthandler would print the parent's stack as if the program had crashed.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, SIG_DFL);
  const SolverOutput out = SolveMipWithCbcInProcess(
      model, start, options, [fd](double objective, const double* values, int32_t count) {
        Put(fd, kSolution);
        Put(fd, objective);
        Put(fd, count);
        WriteAll(fd, values, sizeof(double) * static_cast<size_t>(count));
      });
  Put(fd, kResult);
  Put(fd, static_cast<int32_t>(out.status));
  Put(fd, out.objective);
  Put(fd, out.bound);
  Put(fd, out.seconds);
  Put(fd, out.nodes);
  Put(fd, static_cast<int32_t>(out.values.size()));
  WriteAll(fd, out.values.data(), sizeof(double) * out.values.size());
  Put(fd, static_cast<int32_t>(out.message.size()));
  WriteAll(fd, out.message.data(), out.message.size());
  ::close(fd);
  ::_exit(0);
}

// Accumulates the bytes of the pipe and parses complete frames.
class FrameReader {
 public:
  void Append(const char* data, size_t size) { buffer_.append(data, size); }

  // Parses as many frames as are complete; returns true once the result frame was read.
  bool Parse(SolverOutput& best, SolverOutput& result) {
    while (!buffer_.empty()) {
      size_t at = 1;
      if (buffer_[0] == kSolution) {
        double objective;
        int32_t count;
        if (!Get(at, objective) || !Get(at, count)) return false;
        std::vector<double> values(static_cast<size_t>(count));
        if (!GetArray(at, values)) return false;
        best.objective = objective;
        best.values = std::move(values);
      } else if (buffer_[0] == kResult) {
        int32_t status, count, length;
        if (!Get(at, status) || !Get(at, result.objective) || !Get(at, result.bound) ||
            !Get(at, result.seconds) || !Get(at, result.nodes) || !Get(at, count)) {
          return false;
        }
        result.values.resize(static_cast<size_t>(count));
        if (!GetArray(at, result.values) || !Get(at, length)) return false;
        if (buffer_.size() < at + static_cast<size_t>(length)) return false;
        result.message.assign(buffer_, at, static_cast<size_t>(length));
        result.status = static_cast<SolveStatus>(status);
        buffer_.clear();
        return true;
      } else {
        buffer_.clear();  // cannot happen: the child writes only these frames
        return false;
      }
      buffer_.erase(0, at);
    }
    return false;
  }

 private:
  template <typename T>
  bool Get(size_t& at, T& value) {
    if (buffer_.size() < at + sizeof value) return false;
    std::memcpy(&value, buffer_.data() + at, sizeof value);
    at += sizeof value;
    return true;
  }
  bool GetArray(size_t& at, std::vector<double>& values) {
    const size_t bytes = values.size() * sizeof(double);
    if (buffer_.size() < at + bytes) return false;
    // An empty vector's data() may be null, and memcpy from or to null is undefined even
    // for zero bytes: a frame without a solution carries no values.
    if (bytes > 0) std::memcpy(values.data(), buffer_.data() + at, bytes);
    at += bytes;
    return true;
  }
  std::string buffer_;
};

}  // namespace

SolverOutput SolveMipWithCbc(const LinearModel& model, const std::vector<double>& start,
                             const MipOptions& options) {
  const auto begin = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  };
  int fds[2];
  if (::pipe(fds) != 0) {
    return {.status = SolveStatus::kError, .message = std::string("pipe: ") + std::strerror(errno)};
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return {.status = SolveStatus::kError, .message = std::string("fork: ") + std::strerror(errno)};
  }
  if (child == 0) {
    ::close(fds[0]);
    RunChild(fds[1], model, start, options, parent);
  }
  ::close(fds[1]);
  // The child's own limit comes first; the guard allows for model loading and the MIP start.
  const double deadline_s =
      options.hard_deadline_s > 0 ? options.hard_deadline_s : options.time_limit_s * 1.1 + 3;
  FrameReader reader;
  SolverOutput best;    // last incumbent streamed by the child, else the MIP start
  if (!start.empty()) {
    best.values = start;
    best.objective = model.Objective(start);
  }
  SolverOutput result;  // the child's final answer
  bool finished = false;
  bool killed = false;
  bool cancelled = false;
  bool impatient = false;
  // The child's event handler applies the patience, but CBC calls it only between phases (not
  // during the root LP): here twice the patience without a new incumbent stops it too.
  double last_incumbent_s = 0;
  char chunk[1 << 16];
  while (!finished) {
    // The caller's deadline (core/cancellation.h) kills the child too, keeping the incumbent.
    const double left_s = std::min(deadline_s - elapsed(), SecondsLeft());
    cancelled = CancelRequested();
    impatient = options.patience_s > 0 && elapsed() - last_incumbent_s > 2 * options.patience_s;
    if (left_s <= 0 || cancelled || impatient) {
      ::kill(child, SIGKILL);
      killed = true;
      break;
    }
    // Short waits, so that a cancellation is seen within a tenth of a second.
    pollfd poller{fds[0], POLLIN, 0};
    const int ready = ::poll(&poller, 1, static_cast<int>(std::min(left_s, 0.1) * 1000) + 1);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t got = ::read(fds[0], chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // the child closed the pipe (finished or crashed)
    reader.Append(chunk, static_cast<size_t>(got));
    const double before = best.objective;
    finished = reader.Parse(best, result);
    const bool improved = !std::isnan(best.objective) &&
                          (std::isnan(before) || best.objective < before);  // NaN: none yet
    if (improved) last_incumbent_s = elapsed();
  }
  ::close(fds[0]);
  int wait_status = 0;
  ::waitpid(child, &wait_status, 0);
  if (finished) return result;

  SolverOutput out;
  out.seconds = elapsed();
  const std::string why =
      cancelled ? "cancelled"
      : impatient ? fmt::format("stopped: no progress in {:.0f} s", 2 * options.patience_s)
      : killed  ? "CBC overran its time limit and was stopped"
             : (WIFSIGNALED(wait_status)
                    ? std::string("CBC crashed (signal ") + std::to_string(WTERMSIG(wait_status)) + ")"
                    : "CBC ended without a result");
  if (!best.values.empty()) {
    out.status = SolveStatus::kFeasible;
    out.values = std::move(best.values);
    out.objective = best.objective;
    out.message = why + "; kept the best solution known";
  } else {
    out.status = killed ? SolveStatus::kTimeLimitNoSolution : SolveStatus::kError;
    out.message = why;
  }
  return out;
}

}  // namespace remat
