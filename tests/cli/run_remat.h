// Runs the remat binaries in a shell and capture their exit codes, stdout and stderr.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace remat::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fresh folder under the system temp dir, unique to this process and name.
inline std::filesystem::path TempDir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("remat_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs `binary args` with stdout and stderr captured to files.
inline RunResult RunBinary(const std::string& binary, const std::string& args) {
  const auto dir = TempDir("run");
  const std::string command = binary + " " + args + " >" + (dir / "out").string() + " 2>" +
                              (dir / "err").string();
  const int status = std::system(command.c_str());
  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = Slurp(dir / "out");
  result.err = Slurp(dir / "err");
  std::filesystem::remove_all(dir);
  return result;
}

#ifdef REMAT_BINARY
inline RunResult RunRemat(const std::string& args) { return RunBinary(REMAT_BINARY, args); }
#endif

}  // namespace remat::testing
