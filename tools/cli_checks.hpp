#pragma once
// The rules every flag of every subcommand keeps, added in one place after the subcommands
// have added their options (so no option can forget them), and applied to --config files
// too (their values go through the same options):
//   integers   decimal only ("010" is ten; "0x10", "1e3", "+5" are errors), within the
//              option's type: signed integer flags are `int`, unsigned ones 64-bit
//   numbers    finite decimal numbers (no "nan", "inf" or hexadecimal floats)
//   booleans   true, false, 1 or 0
//   any value  not empty ("--trace ''" is an error, not "no trace")
#include <string>

#include "tools/cli_app.hpp"

namespace CLI {
class Error;
class Option;
}  // namespace CLI

namespace pipesim {

void add_value_checks(CLI::App& app);  // app and all its subcommands

// For a flag whose 0 means "not given": given, it must be above 0 ("--share-cores 0" would
// otherwise share nothing without a word): "'0': expected <what> above 0". Text that is not
// a number is left to the number and integer checks, which run after this one.
void require_above_zero(CLI::Option& option, const std::string& what);

// Why `text` is not a number as the number flags take it ("expected a decimal number",
// "out of range"); empty when it is one (then std::strtod reads all of it).
std::string number_problem(const std::string& text);

// A CLI11 error as one line for a person: CLI11's "Could not convert: --stages =
// 99999999999" becomes "--stages: '99999999999' is out of range for this option".
std::string cli_error_text(const CLI::Error& e);

}  // namespace pipesim
