#include "tools/cli_checks.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>

#include <CLI/CLI.hpp>

#include "core/decimal.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Leading zeros dropped, so that CLI11's own conversion (strtoll with base 0) reads the
// digits as decimal: "010" -> "10", "-007" -> "-7".
std::string without_leading_zeros(const std::string& v) {
  const std::size_t sign = v[0] == '-' ? 1 : 0;
  std::size_t first = v.find_first_not_of('0', sign);
  if (first == std::string::npos) return "0";
  return v.substr(0, sign) + v.substr(first);
}

template <class T>
CLI::Validator integer_check() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        if (std::string problem = decimal_problem<T>(v); !problem.empty()) return quote(v) + ": " + problem;
        v = without_leading_zeros(v);
        return {};
      },
      "", "pipesim-integer");
}

CLI::Validator number_check() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        const std::string problem = number_problem(v);
        return problem.empty() ? problem : quote(v) + ": " + problem;
      },
      "", "pipesim-number");
}

CLI::Validator boolean_check() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        if (v == "true" || v == "false" || v == "1" || v == "0") return {};
        return quote(v) + ": expected true or false";
      },
      "", "pipesim-boolean");
}

CLI::Validator not_empty_check() {
  return CLI::Validator(
      [](std::string& v) -> std::string { return v.empty() ? "expected a value, got an empty string" : ""; }, "",
      "pipesim-not-empty");
}

}  // namespace

std::string cli_error_text(const CLI::Error& e) {
  const std::string what = one_line(e.what());
  const std::string prefix = "Could not convert: ";
  if (what.rfind(prefix, 0) == 0) {
    const std::size_t eq = what.find(" = ");
    if (eq != std::string::npos)
      return what.substr(prefix.size(), eq - prefix.size()) + ": " + quote(what.substr(eq + 3)) +
             " is out of range for this option";
  }
  // A single-valued flag given twice (CLI11's ArgumentMismatch::AtMost).
  const std::string at_most = ": At Most 1 required but received ";
  if (const std::size_t at = what.find(at_most); at != std::string::npos)
    return what.substr(0, at) + ": given " + what.substr(at + at_most.size()) + " times; it takes one value";
  return what;
}

std::string number_problem(const std::string& v) {
  // Digits, one point, an exponent: what strtod reads, without its nan, inf and hex forms.
  const bool plain = v.find_first_not_of("0123456789.eE+-") == std::string::npos;
  char* end = nullptr;
  const double d = plain ? std::strtod(v.c_str(), &end) : 0.0;
  if (!plain || v.empty() || end != v.c_str() + v.size()) return "expected a decimal number";
  if (!std::isfinite(d)) return "out of range";
  return {};
}

void require_above_zero(CLI::Option& option, const std::string& what) {
  option.check(CLI::Validator(
      [what](std::string& v) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        if (v.empty() || *end != '\0' || x > 0) return {};
        return quote(v) + ": expected " + what + " above 0";
      },
      "", "pipesim-above-zero"));
}

void add_value_checks(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_expected_max() == 0) continue;  // a flag without a value (--json)
    const std::string type = opt->get_type_name();
    if (starts_with(type, "INT")) {
      opt->transform(integer_check<int>());
    } else if (starts_with(type, "UINT")) {
      opt->transform(integer_check<std::uint64_t>());
    } else if (starts_with(type, "FLOAT")) {
      opt->transform(number_check());
    } else if (starts_with(type, "BOOLEAN")) {
      opt->transform(boolean_check());
    }
    opt->transform(not_empty_check());  // inserted first: runs before the others
  }
  for (CLI::App* sub : app.get_subcommands({})) add_value_checks(*sub);
}

}  // namespace pipesim
