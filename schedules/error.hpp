#pragma once
// InputError: the one exception type for bad user input (flags, files, numbers).
// Its message is a single line naming where the problem is (file:line, JSON path,
// flag) and what was expected. The CLI prints it and exits with code 2.
// Broken internal invariants are not InputErrors: they use PIPESIM_ASSERT.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace pipesim {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void assert_fail(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "pipesim: internal invariant broken: %s (%s:%d)\n", expr, file, line);
  std::abort();
}

}  // namespace pipesim

// Always on, also in release builds: a simulator that quietly lies is worse than one that stops.
#define PIPESIM_ASSERT(expr) ((expr) ? (void)0 : ::pipesim::assert_fail(#expr, __FILE__, __LINE__))
