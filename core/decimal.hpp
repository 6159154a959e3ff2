#pragma once
// Integers as people write them, in every flag, config key and file: decimal digits with an
// optional leading '-'. "010" is ten (never eight); "0x10", "1e3", "+5", " 5" and "5 " are
// not integers; a value outside the type's range is an error, never a wrapped or clamped
// number.
#include <charconv>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace pipesim {

// The value of `text` as a T, or nullopt when it is not a decimal integer in T's range.
template <class T>
std::optional<T> parse_decimal(std::string_view text) {
  static_assert(std::numeric_limits<T>::is_integer);
  if (text.empty() || (text.front() == '-' && !std::numeric_limits<T>::is_signed)) return std::nullopt;
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 10);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Why `text` is not a decimal T, for a message: "expected a decimal integer",
// "out of range (at most 2147483647)", ...; empty when it is one.
template <class T>
std::string decimal_problem(std::string_view text) {
  if (parse_decimal<T>(text)) return {};
  const bool digits = !text.empty() && text.find_first_not_of("0123456789", text.front() == '-' ? 1 : 0) ==
                                           std::string_view::npos && text != "-";
  if (!digits) {
    if (text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X' || text[1] == 'b' || text[1] == 'o'))
      return "expected a decimal integer (hexadecimal, binary and octal are not accepted)";
    return "expected a decimal integer";
  }
  if (text.front() == '-' && !std::numeric_limits<T>::is_signed) return "must not be negative";
  return "out of range (" + std::to_string(std::numeric_limits<T>::min()) + " to " +
         std::to_string(std::numeric_limits<T>::max()) + ")";
}

}  // namespace pipesim
