#pragma once
// Parsing a JSON file the user wrote, the one way every reader does it (schedules, configs,
// catalogs, profiles): a located one-line message for invalid JSON ("line 3, column 7:
// invalid JSON (...)"), numbers too large for a double refused, and a key given twice in
// one object refused with its JSON path (nlohmann would silently keep the last one).
#include <string_view>

#include <nlohmann/json.hpp>

namespace pipesim {

// `source` names the file in messages. InputError for every problem.
nlohmann::json parse_json_input(std::string_view text, std::string_view source);

}  // namespace pipesim
