#pragma once
// InputError: the one exception type for bad user input (flags, files, numbers).
// Its message is a single line naming where the problem is (file:line, JSON path,
// flag) and what was expected. The CLI prints it and exits with code 2.
// Broken internal invariants are not InputErrors: they use PIPESIM_ASSERT.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace pipesim {

// `text` with control characters escaped ('\n' as "\\n", others as "\\xNN"), so that a
// message quoting the input (a JSON string holding a newline, a stray '\r') stays one line.
inline std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(one_line(message)) {}
  explicit InputError(const char* message) : InputError(std::string(message)) {}
};

[[noreturn]] inline void assert_fail(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "pipesim: internal invariant broken: %s (%s:%d)\n", expr, file, line);
  std::abort();
}

}  // namespace pipesim

// Always on, also in release builds: a simulator that quietly lies is worse than one that stops.
#define PIPESIM_ASSERT(expr) ((expr) ? (void)0 : ::pipesim::assert_fail(#expr, __FILE__, __LINE__))
