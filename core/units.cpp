#include "core/units.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "core/error.hpp"

namespace pipesim {
namespace {

// Exact 128-bit intermediate so that "2.5us" is exactly 2500 ns and "0.1s" exactly
// 100000000 ns: going through double would round some decimal fractions the wrong way.
__extension__ typedef unsigned __int128 U128;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };  // " \t\n\v\f\r"
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A decimal literal "123", "123.45", ".5" or "5." split into its digit runs; the unit is
// what follows (spaces between number and unit are allowed).
struct Number {
  std::string_view int_digits;
  std::string_view frac_digits;
  std::string_view unit;
};

enum class Split { kOk, kEmpty, kNegative, kNoNumber };

Split split_number(std::string_view text, Number& out) {
  text = trim(text);
  if (text.empty()) return Split::kEmpty;
  if (text.front() == '-') return Split::kNegative;
  if (text.front() == '+') text.remove_prefix(1);
  std::size_t pos = 0;
  while (pos < text.size() && is_digit(text[pos])) ++pos;
  out.int_digits = text.substr(0, pos);
  if (pos < text.size() && text[pos] == '.') {
    const std::size_t start = ++pos;
    while (pos < text.size() && is_digit(text[pos])) ++pos;
    out.frac_digits = text.substr(start, pos - start);
  } else {
    out.frac_digits = {};
  }
  if (out.int_digits.empty() && out.frac_digits.empty()) return Split::kNoNumber;
  out.unit = trim(text.substr(pos));
  return Split::kOk;
}

// round(number * multiplier), exactly; false if the result does not fit in int64.
bool scale_exact(const Number& n, std::int64_t multiplier, std::int64_t& out) {
  const U128 limit = static_cast<U128>(kInt64Max);
  U128 whole = 0;
  for (char c : n.int_digits) {
    whole = whole * 10 + static_cast<unsigned>(c - '0');
    if (whole > limit) return false;  // also keeps the product below 2^127
  }
  U128 value = whole * static_cast<U128>(multiplier);
  // Fraction: at most 18 digits matter (multipliers are <= 2^40, so 10^18 * 2^40 < 2^128).
  const std::string_view frac = n.frac_digits.substr(0, 18);
  U128 numerator = 0;
  U128 denominator = 1;
  for (char c : frac) {
    numerator = numerator * 10 + static_cast<unsigned>(c - '0');
    denominator *= 10;
  }
  value += (numerator * static_cast<U128>(multiplier) + denominator / 2) / denominator;  // half up
  if (value > limit) return false;
  out = static_cast<std::int64_t>(value);
  return true;
}

struct Unit {
  std::string_view name;
  std::int64_t multiplier;
};

constexpr std::array<Unit, 5> kDurationUnits{{
    {"ns", 1}, {"us", kNsPerUs}, {"\xC2\xB5s", kNsPerUs} /* µs */, {"ms", kNsPerMs}, {"s", kNsPerS}}};

constexpr std::int64_t kKi = 1024;
constexpr std::array<Unit, 10> kSizeUnits{{{"B", 1},
                                           {"KB", 1'000},
                                           {"kB", 1'000},
                                           {"MB", 1'000'000},
                                           {"GB", 1'000'000'000},
                                           {"TB", 1'000'000'000'000},
                                           {"KiB", kKi},
                                           {"MiB", kKi * kKi},
                                           {"GiB", kKi * kKi * kKi},
                                           {"TiB", kKi * kKi * kKi * kKi}}};

// Bit units for bandwidth, as multipliers in bits (divided by 8 afterwards).
constexpr std::array<Unit, 12> kBitUnits{{{"b", 1},
                                          {"bit", 1},
                                          {"Kb", 1'000},
                                          {"kb", 1'000},
                                          {"Kbit", 1'000},
                                          {"kbit", 1'000},
                                          {"Mb", 1'000'000},
                                          {"Mbit", 1'000'000},
                                          {"Gb", 1'000'000'000},
                                          {"Gbit", 1'000'000'000},
                                          {"Tb", 1'000'000'000'000},
                                          {"Tbit", 1'000'000'000'000}}};

template <std::size_t N>
const Unit* find_unit(const std::array<Unit, N>& units, std::string_view name) {
  for (const Unit& u : units)
    if (u.name == name) return &u;
  return nullptr;
}

std::string prefix(std::string_view what) { return what.empty() ? std::string() : std::string(what) + ": "; }

[[noreturn]] void fail(std::string_view what, std::string_view expected, std::string_view text,
                       std::string_view why = {}) {
  std::string msg = prefix(what) + "expected " + std::string(expected) + "; got " + quote(text);
  if (!why.empty()) msg += " (" + std::string(why) + ")";
  throw InputError(msg);
}

[[noreturn]] void fail_negative(std::string_view what, std::string_view text) {
  throw InputError(prefix(what) + "must not be negative; got " + quote(text));
}

// The number and its unit; every parser's first step, with the same errors.
Number number_with_unit(std::string_view text, std::string_view what, std::string_view expected) {
  Number n;
  switch (split_number(text, n)) {
    case Split::kEmpty: fail(what, expected, text, "empty");
    case Split::kNegative: fail_negative(what, text);
    case Split::kNoNumber: fail(what, expected, text);
    case Split::kOk: break;
  }
  if (n.unit.empty()) fail(what, expected, text, "missing unit");
  return n;
}

// Shared body of parse_duration / parse_bytes: number + unit from `units`, exact int64.
template <std::size_t N>
std::int64_t parse_scaled(std::string_view text, std::string_view what, std::string_view expected,
                          const std::array<Unit, N>& units, std::string_view too_large, std::string_view resolution) {
  const Number n = number_with_unit(text, what, expected);
  const Unit* unit = find_unit(units, n.unit);
  if (!unit) fail(what, expected, text, "unknown unit " + quote(n.unit));
  std::int64_t out = 0;
  if (!scale_exact(n, unit->multiplier, out))
    throw InputError(prefix(what) + quote(text) + " is too large (" + std::string(too_large) + ")");
  const auto nonzero = [](std::string_view digits) { return digits.find_first_not_of('0') != std::string_view::npos; };
  if (out == 0 && (nonzero(n.int_digits) || nonzero(n.frac_digits)))  // would silently become zero
    throw InputError(prefix(what) + quote(text) + " is below the resolution of " + std::string(resolution));
  return out;
}

// "%.Nf" of q / 1000 for an integer q, without going through double.
std::string thousandths(std::int64_t q) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(q / 1000), static_cast<long long>(q % 1000));
  return buf;
}

// SI prefixes of FLOP/s (decimal, as every datasheet uses them).
constexpr std::array<Unit, 7> kFlopPrefixes{{{"", 1},
                                             {"K", 1'000},
                                             {"M", 1'000'000},
                                             {"G", 1'000'000'000},
                                             {"T", 1'000'000'000'000},
                                             {"P", 1'000'000'000'000'000},
                                             {"E", 1'000'000'000'000'000'000}}};

// number x per_unit as a double: the tail shared by the rate parsers (bandwidth, FLOP/s).
double positive_rate(const Number& n, double per_unit, std::string_view text, std::string_view what,
                     std::string_view expected) {
  // The number was validated as plain digits, so from_chars cannot see "nan"/"inf".
  const std::string digits = std::string(n.int_digits.empty() ? "0" : n.int_digits) + "." +
                             std::string(n.frac_digits.empty() ? "0" : n.frac_digits);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  const double rate = value * per_unit;
  if (ec == std::errc::result_out_of_range || !std::isfinite(rate))
    throw InputError(prefix(what) + quote(text) + " is too large");
  if (ec != std::errc() || ptr != digits.data() + digits.size()) fail(what, expected, text);
  if (!(rate > 0)) throw InputError(prefix(what) + "must be positive; got " + quote(text));
  return rate;
}

}  // namespace

Tick parse_duration(std::string_view text, std::string_view what) {
  return parse_scaled(text, what, "a duration with a unit such as 1ms, 250us, 2.5s", kDurationUnits,
                      "at most 9223372036 s", "1 ns");
}

std::int64_t parse_bytes(std::string_view text, std::string_view what) {
  return parse_scaled(text, what, "a size with a unit such as 512B, 64MiB, 1.5GB", kSizeUnits,
                      "at most 8388608 TiB", "1 B");
}

double parse_bandwidth(std::string_view text, std::string_view what) {
  static constexpr std::string_view kExpected = "a bandwidth such as 50GB/s, 25GiB/s, 400Gb/s or 100Gbit/s";
  const Number n = number_with_unit(text, what, kExpected);
  const std::size_t slash = n.unit.rfind('/');
  if (slash == std::string_view::npos || trim(n.unit.substr(slash + 1)) != "s")
    fail(what, kExpected, text, "missing '/s'");
  const std::string_view unit = trim(n.unit.substr(0, slash));
  double per_unit = 0;  // bytes per second for one of `unit` per second
  if (const Unit* u = find_unit(kSizeUnits, unit)) {
    per_unit = static_cast<double>(u->multiplier);
  } else if (const Unit* b = find_unit(kBitUnits, unit)) {
    per_unit = static_cast<double>(b->multiplier) / 8.0;
  } else {
    fail(what, kExpected, text, "unknown unit '" + std::string(unit) + "/s'");
  }
  return positive_rate(n, per_unit, text, what, kExpected);
}

double parse_flops(std::string_view text, std::string_view what) {
  static constexpr std::string_view kExpected = "a compute rate such as 989.4TFLOP/s, 2.25 PFLOP/s or 19.5TFLOPS";
  const Number n = number_with_unit(text, what, kExpected);
  // "FLOP/s" and "FLOPS" mean the same; "FLOPs" (a count of operations) is not a rate.
  std::string_view unit = n.unit;
  if (unit.ends_with("FLOP/s")) {
    unit.remove_suffix(6);
  } else if (unit.ends_with("FLOPS")) {
    unit.remove_suffix(5);
  } else {
    fail(what, kExpected, text, "unknown unit " + quote(n.unit));
  }
  const Unit* u = find_unit(kFlopPrefixes, unit);
  if (!u) fail(what, kExpected, text, "unknown unit " + quote(n.unit));
  const double rate = positive_rate(n, static_cast<double>(u->multiplier), text, what, kExpected);
  // Far below any processor; below it a model's op would take years, past what a run counts.
  if (rate < 1e6) throw InputError(prefix(what) + "at least 1 MFLOP/s; got " + quote(text));
  return rate;
}

std::string format_duration_seconds(double s) { return format_duration(static_cast<Tick>(std::llround(s * 1e9))); }

std::string format_duration(Tick ns) {
  if (ns < 0) {
    // -ns overflows for INT64_MIN; format its magnitude through unsigned arithmetic instead.
    if (ns == std::numeric_limits<Tick>::min()) return "-9223372036.855 s";
    return "-" + format_duration(-ns);
  }
  // Pick the largest unit whose rounded value is at least 1.000, so 999999999 ns prints as
  // "1.000 s" rather than "1000.000 ms".
  static constexpr struct { Tick scale; const char* name; } kUnits[] = {
      {kNsPerS, " s"}, {kNsPerMs, " ms"}, {kNsPerUs, " us"}};
  for (const auto& u : kUnits) {
    const Tick step = u.scale / 1000;  // one thousandth of the unit
    const Tick q = ns / step + (ns % step >= (step + 1) / 2 ? 1 : 0);
    if (q >= 1000) return thousandths(q) + u.name;
  }
  return std::to_string(ns) + " ns";
}

std::string format_bytes(double bytes) {
  if (std::isnan(bytes)) return "nan B";
  if (bytes < 0) return "-" + format_bytes(-bytes);
  if (std::isinf(bytes)) return "inf B";
  static constexpr const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  double value = bytes;
  // Promote while the value would print as 1024.0 or more (1023.96 B -> "1.0 KiB").
  while (unit < 4 && value >= 1023.95) {
    value /= 1024.0;
    ++unit;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %s", value, kNames[unit]);
  return buf;
}

double ticks_to_seconds(Tick ns) { return static_cast<double>(ns) / static_cast<double>(kNsPerS); }

}  // namespace pipesim
