#pragma once
// Runs the real `pipesim` binary for the command-line tests (PIPESIM_CLI is its path).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace pipesim::testing_cli {

struct Result {
  int code = -1;
  std::string out;  // stdout and stderr together
};

// A shell command line, its stdout and stderr together.
inline Result run_shell(const std::string& command_line) {
  const std::string cmd = command_line + " 2>&1";
  Result r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline Result run(const std::string& args) { return run_shell(std::string(PIPESIM_CLI) + " " + args); }

// ctest runs every test in a process of its own, several at once (-j2): a name shared by two
// tests' files would let one test truncate the file another is reading. The process id keeps
// each test's files its own; they are removed when the test process exits.
inline std::string temp_path(const std::string& name) {
  struct Created {
    std::vector<std::string> paths;
    ~Created() {
      std::error_code ignored;
      for (const auto& p : paths) std::filesystem::remove_all(p, ignored);
    }
  };
  static Created created;
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("pipesim_cli_test_" + std::to_string(::getpid()) + "_" + name)).string();
  if (std::find(created.paths.begin(), created.paths.end(), path) == created.paths.end()) created.paths.push_back(path);
  return path;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Exit code 2 and exactly one line, "pipesim: error: ...", containing `needle`.
inline void expect_one_line_error(const Result& r, const std::string& needle) {
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_THAT(r.out, ::testing::HasSubstr(needle));
  EXPECT_THAT(r.out, ::testing::StartsWith("pipesim: error: "));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

}  // namespace pipesim::testing_cli
