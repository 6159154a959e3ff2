#pragma once
// "Did you mean": the known names closest to one the user mistyped (a schedule, model, GPU
// or link name), for the one-line error that rejects it.
#include <string>
#include <string_view>
#include <vector>

namespace pipesim {

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbours, one edit each; letters compare case-insensitively.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The names of `known` worth suggesting for `name`, at most `limit`: those that begin with
// `name` (of two characters or more), then the closest ones if they are within
// max(1, |name| / 3) edits, each group in the order of `known`. Empty when none is close.
std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& known,
                                       std::size_t limit = 3);

// "did you mean 'zb-h1'? ", "did you mean 'zb-h1' or 'zb-h2'? ", "did you mean 'a', 'b' or
// 'c'? " (names quoted with core/error.hpp's quote), or "" when closest_names finds none;
// meant to open the parenthesis that lists the known names.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& known);

}  // namespace pipesim
