#include "core/json_input.hpp"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace pipesim {
namespace {

using json = nlohmann::json;

// nlohmann's parse_error says "parse error at line L, column C: <why>"; keep only <why>.
std::string parse_error_reason(std::string_view what) {
  const std::size_t column = what.find("column ");
  const std::size_t colon = column == std::string_view::npos ? column : what.find(": ", column);
  return std::string(colon == std::string_view::npos ? what : what.substr(colon + 2));
}

// The containers open while parsing, to name a duplicate key by its JSON path.
struct Open {
  bool object;
  std::set<std::string> keys;
  std::string key;      // object: the current key
  long long index = -1; // array: the current element
};

std::string path_of(const std::vector<Open>& stack) {
  std::string path;
  for (const Open& o : stack) path += "/" + (o.object ? o.key : std::to_string(o.index));
  return path;
}

}  // namespace

nlohmann::json parse_json_input(std::string_view text, std::string_view source_name) {
  const std::string source(source_name);
  std::vector<Open> stack;
  const json::parser_callback_t check = [&](int, json::parse_event_t event, json& parsed) {
    using E = json::parse_event_t;
    const bool element = event == E::value || event == E::object_start || event == E::array_start;
    if (element && !stack.empty() && !stack.back().object) ++stack.back().index;
    switch (event) {
      case E::object_start: stack.push_back({true, {}, {}}); break;
      case E::array_start: stack.push_back({false, {}, {}}); break;
      case E::object_end:
      case E::array_end: stack.pop_back(); break;
      case E::key: {
        Open& top = stack.back();
        top.key = parsed.get<std::string>();
        if (!top.keys.insert(top.key).second)
          throw InputError(source + ": " + path_of(stack) + ": the key " + quote(top.key) +
                           " is given twice in one object (which one is meant?)");
        break;
      }
      case E::value: break;
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), check);
  } catch (const json::parse_error& e) {
    // e.byte is the 1-based offset of the last character read; recount line and column
    // from it so they match what an editor shows.
    const std::size_t pos = std::min(e.byte == 0 ? 0 : e.byte - 1, text.size());
    const std::string_view before = text.substr(0, pos);
    const std::size_t line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
    const std::size_t nl = before.rfind('\n');
    const std::size_t column = nl == std::string_view::npos ? pos + 1 : pos - nl;
    throw InputError(source + ": line " + std::to_string(line) + ", column " + std::to_string(column) +
                     ": invalid JSON (" + parse_error_reason(e.what()) + ")");
  } catch (const json::exception& e) {
    // Not every parser error is a parse_error: "1e400" is an out_of_range (406), without a
    // position. what() is "[json.exception.out_of_range.406] number overflow ...": drop the tag.
    const std::string_view what(e.what());
    const std::size_t tag_end = what.find("] ");
    throw InputError(source + ": invalid JSON (" +
                     std::string(tag_end == std::string_view::npos ? what : what.substr(tag_end + 2)) + ")");
  }
}

}  // namespace pipesim
