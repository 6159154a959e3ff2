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

inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("pipesim_cli_test_" + name)).string();
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
