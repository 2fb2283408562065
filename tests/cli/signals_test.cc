// Signals to a running `remat solve`: the CBC child process (src/solvers/cbc_mip.cc) ends with
// remat whichever way remat ends, so no solver keeps a core busy after the command is gone.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/run_remat.h"

namespace remat::testing {
namespace {

using namespace std::chrono_literals;

// The fields of /proc/<pid>/stat after the command name: state, then the parent's pid.
struct ProcStat {
  char state = '?';
  pid_t parent = 0;
};

std::optional<ProcStat> ReadStat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t name_end = text.rfind(')');  // the name may hold spaces and parentheses
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(name_end + 1));
  ProcStat stat;
  fields >> stat.state >> stat.parent;
  return stat;
}

// Running or sleeping; a zombie that nobody reaped has ended too.
bool Alive(pid_t pid) {
  const std::optional<ProcStat> stat = ReadStat(pid);
  return stat && stat->state != 'Z' && stat->state != 'X';
}

std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    const std::optional<ProcStat> stat = ReadStat(pid);
    if (stat && stat->parent == parent && stat->state != 'Z') children.push_back(pid);
  }
  return children;
}

// A solve whose CBC runs take seconds each: the optimal pipeline on a 300-node random DAG at
// 80% of its no-remat peak (a window search, each window a CBC run of about a quarter of the
// time left) with 60 s to spend.
class SignalsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(TempDir("signals"));
    graph_ = new std::string((*dir_ / "rl300.json").string());
    const RunResult made =
        RunRemat("graph random-layered --nodes 300 --seed 3 -o " + *graph_);
    ASSERT_EQ(made.exit_code, 0) << made.err;
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete graph_;
    delete dir_;
  }

  // Starts the solve in a session of its own (as `setsid remat solve ...` or a shell's job) and
  // returns its pid once one of its CBC children has run for a second (the solve is then past
  // its start and inside a long CBC run); -1 in `child` when none appeared within 60 s.
  pid_t StartSolve(pid_t& child) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setsid();
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
      ::execl(REMAT_BINARY, "remat", "solve", "--graph", graph_->c_str(), "--budget", "80%",
              "--strategy", "optimal", "--time-limit", "60", "--quiet",
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    child = -1;
    pid_t seen = -1;
    auto seen_since = std::chrono::steady_clock::now();
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    while (std::chrono::steady_clock::now() < give_up) {
      const std::vector<pid_t> children = ChildrenOf(pid);
      if (children.empty()) {
        seen = -1;
      } else if (children.front() != seen) {
        seen = children.front();
        seen_since = std::chrono::steady_clock::now();
      } else if (std::chrono::steady_clock::now() - seen_since >= 1s) {
        child = seen;
        return pid;
      }
      std::this_thread::sleep_for(50ms);
    }
    return pid;
  }

  // Sends `sig` to remat (or to its process group), waits for remat to end and asserts that
  // its CBC child is gone 2 s later.
  void ExpectChildDiesWithRemat(int sig, bool to_group) {
    pid_t child = -1;
    const pid_t remat = StartSolve(child);
    if (child < 0) {
      ::kill(remat, SIGKILL);
      ::waitpid(remat, nullptr, 0);
      FAIL() << "no CBC child ran for a second within 60 s";
    }
    ASSERT_EQ(::kill(to_group ? -remat : remat, sig), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(remat, &status, 0), remat);
    std::this_thread::sleep_for(2s);
    const bool survived = Alive(child);
    if (survived) ::kill(child, SIGKILL);  // leave no busy process behind a failed test
    EXPECT_FALSE(survived) << "CBC child " << child << " outlived remat by 2 s";
  }

  static std::filesystem::path* dir_;
  static std::string* graph_;
};

std::filesystem::path* SignalsTest::dir_ = nullptr;
std::string* SignalsTest::graph_ = nullptr;

TEST_F(SignalsTest, ChildDiesWhenRematGetsSigint) { ExpectChildDiesWithRemat(SIGINT, false); }

TEST_F(SignalsTest, ChildDiesWhenRematGetsSigterm) { ExpectChildDiesWithRemat(SIGTERM, false); }

TEST_F(SignalsTest, ChildDiesWhenRematGetsSigkill) { ExpectChildDiesWithRemat(SIGKILL, false); }

// Ctrl-C in a terminal signals the whole foreground process group, the child included.
TEST_F(SignalsTest, ChildDiesWhenTheGroupGetsSigint) { ExpectChildDiesWithRemat(SIGINT, true); }

}  // namespace
}  // namespace remat::testing
