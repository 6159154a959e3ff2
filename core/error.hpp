#pragma once
// The errors every module reports, and how a message quotes what the user gave.
//   InputError   bad user input (flags, files, numbers, paths): a single line naming where
//                the problem is (file:line, JSON path, flag) and what was expected. Exit 2.
//   OutputError  an output that could not be written to the end (a full disk, a file-size
//                limit, a closed pipe): the file is left as it was. Exit 4.
// Broken internal invariants are neither: they use PIPESIM_ASSERT. The exit codes are
// tools/exit_codes.hpp's, documented in the README.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace pipesim {

// Length of the well-formed UTF-8 sequence at text[i] that is no C1 control (U+0080 to
// U+009F, which some terminals obey like escape sequences) and no invisible format
// character (below), or 0.
inline std::size_t utf8_printable(std::string_view text, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = at(i);
  const std::size_t n = lead >= 0xf0 && lead <= 0xf4 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 && lead < 0xe0 ? 2 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  std::uint32_t cp = lead & (0x7f >> n);
  for (std::size_t k = 1; k < n; ++k) {
    if ((at(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (at(i + k) & 0x3f);
  }
  const bool overlong = (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
  if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp <= 0x9f) return 0;
  // Invisible ones are escaped too: a stray byte-order mark, zero-width characters, and the
  // bidirectional overrides that could reorder what the terminal shows.
  if (cp == 0xfeff || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) ||
      (cp >= 0x2060 && cp <= 0x206f))
    return 0;
  return n;
}

// `text` as one printable line: control characters escaped ('\n' as "\\n", others as
// "\\xNN"), and bytes that are not UTF-8 too, so that a message quoting the input (a JSON
// string holding a newline, a CSV cell with a stray '\r' or binary junk) stays one line and
// cannot drive the terminal.
inline std::string one_line(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else if (const std::size_t n = u >= 0x80 ? utf8_printable(text, i) : 0; n > 0) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
    ++i;
  }
  return out;
}

// At most this many characters of a message reach the terminal: a message that quotes a
// megabyte of input stays readable. quote() cuts each quoted token far earlier.
inline constexpr std::size_t kMaxMessageChars = 2000;

// `message` as one line (one_line), cut at kMaxMessageChars with the length said.
inline std::string bounded_line(std::string_view message) {
  std::string line = one_line(message);
  if (line.size() <= kMaxMessageChars) return line;
  const std::size_t total = line.size();
  std::size_t cut = kMaxMessageChars;
  while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xc0) == 0x80) --cut;  // not inside a UTF-8 sequence
  line.resize(cut);
  return line + "... (" + std::to_string(total - cut) + " more characters)";
}

// A token from the input, quoted for a message: 'text', escaped by one_line, and past
// `max_chars` cut with its length said: 'aaaa...' (100000 characters).
inline std::string quote(std::string_view text, std::size_t max_chars = 64) {
  if (text.size() <= max_chars) return "'" + std::string(text) + "'";
  std::size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return "'" + std::string(text.substr(0, cut)) + "...' (" + std::to_string(text.size()) + " characters)";
}

class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(bounded_line(message)) {}
  explicit InputError(const char* message) : InputError(std::string(message)) {}
};

class OutputError : public std::runtime_error {
 public:
  explicit OutputError(const std::string& message) : std::runtime_error(bounded_line(message)) {}
};

[[noreturn]] inline void assert_fail(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "pipesim: internal error: invariant broken: %s (%s:%d); please report this\n", expr, file, line);
  std::abort();
}

}  // namespace pipesim

// Always on, also in release builds: a simulator that quietly lies is worse than one that stops.
#define PIPESIM_ASSERT(expr) ((expr) ? (void)0 : ::pipesim::assert_fail(#expr, __FILE__, __LINE__))
