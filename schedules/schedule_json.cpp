// The JSON schedule format (docs/schedule-format.md), both ways: parse_schedule_json and
// schedule_to_json of schedules/schedule_io.hpp.
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/json_input.hpp"
#include "schedules/op_text.hpp"
#include "schedules/schedule_io.hpp"
#include "schedules/schedule_reading.hpp"

namespace pipesim {
namespace {

using namespace schedule_reading;
using nlohmann::json;

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

std::string pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

// Integer value of j (unsigned values beyond int64 saturate); false if j is no integer.
bool as_int64(const json& j, std::int64_t& out) {
  if (j.is_number_unsigned()) {
    const auto u = j.get<std::uint64_t>();
    out = u > static_cast<std::uint64_t>(kInt64Max) ? kInt64Max : static_cast<std::int64_t>(u);
    return true;
  }
  if (j.is_number_integer()) {
    out = j.get<std::int64_t>();
    return true;
  }
  return false;
}

// "got string" for a wrong type, "got 2.5" for a number that is not what was asked for.
std::string got(const json& j) { return "got " + (j.is_number() ? j.dump() : std::string(j.type_name())); }

struct JsonReader {
  const std::string& source;
  const json& root;

  [[noreturn]] void fail_at(const std::string& ptr, const std::string& what) const { fail(source + ": " + ptr, what); }

  std::optional<int> positive_int(const char* key) const {
    const auto it = root.find(key);
    if (it == root.end()) return std::nullopt;
    std::int64_t v = 0;
    const std::string ptr = std::string("/") + key;
    if (!as_int64(*it, v)) fail_at(ptr, "expected a positive integer, " + got(*it));
    if (v < 1 || v > kInt32Max) fail_at(ptr, "expected a positive integer, got " + it->dump());
    return static_cast<int>(v);
  }
  std::optional<std::string> string(const char* key) const {
    const auto it = root.find(key);
    if (it == root.end()) return std::nullopt;
    if (!it->is_string()) fail_at(std::string("/") + key, std::string("expected a string, got ") + it->type_name());
    return it->get<std::string>();
  }
};

Schedule read_json(const json& root, const std::string& source) {
  if (!root.is_object()) fail(source, std::string("expected a JSON object at the top level, got ") + root.type_name());
  static const std::set<std::string> kFields = {"format",       "version",    "name",
                                                "num_devices",  "num_stages", "num_pipelines",
                                                "microbatches", "iterations", "blocking_grad_sync",
                                                "weight_policy", "microbatch_split", "placement",
                                                "ops"};
  for (const auto& [key, value] : root.items())
    if (!kFields.count(key))
      fail(source + ": /" + pointer_token(key),
           "unknown field (expected format, version, name, num_devices, num_stages, num_pipelines, microbatches, "
           "iterations, blocking_grad_sync, weight_policy, microbatch_split, placement, ops)");
  const JsonReader r{source, root};
  if (const auto format = r.string("format"); format && *format != "pipesim-schedule")
    r.fail_at("/format", "expected \"pipesim-schedule\", got \"" + *format + "\"");
  if (root.contains("version") && (!root["version"].is_number_integer() || root["version"] != 1))
    r.fail_at("/version", "unsupported version " +
                              // dump() recurses: not on a value that may be nested 100000 deep
                              (root["version"].is_structured() ? std::string(root["version"].type_name())
                                                               : root["version"].dump()) +
                              " (this pipesim reads version 1)");

  Schedule s;
  s.name = r.string("name").value_or(stem(source));
  if (s.name != one_line(s.name) || s.name.size() > 200)  // printed in tables, traces and file names
    fail(source + ": /name", quote(s.name) + ": a schedule name is printable text of at most 200 characters");
  if (const auto it = root.find("blocking_grad_sync"); it != root.end()) {
    if (!it->is_boolean()) r.fail_at("/blocking_grad_sync", "expected true or false, " + got(*it));
    s.blocking_grad_sync = it->get<bool>();
  }
  if (const auto policy = r.string("weight_policy")) {
    bool known = false;
    for (WeightPolicy p : {WeightPolicy::Current, WeightPolicy::Stash, WeightPolicy::TwoBW})
      if (*policy == weight_policy_name(p)) {
        s.weight_policy = p;
        known = true;
      }
    if (!known) r.fail_at("/weight_policy", "expected \"current\", \"stash\" or \"2bw\", got \"" + *policy + "\"");
  }
  s.microbatch_split = r.positive_int("microbatch_split").value_or(1);
  Explicit given;
  given.num_stages = r.positive_int("num_stages");
  given.num_pipelines = r.positive_int("num_pipelines");
  given.microbatches = r.positive_int("microbatches");
  given.iterations = r.positive_int("iterations");
  const std::optional<int> num_devices = r.positive_int("num_devices");

  // ops: required, one array of op strings per device.
  const auto ops = root.find("ops");
  if (ops == root.end()) fail(source, "missing field /ops (one array of ops per device, like [[\"0F0\", \"0B0\"]])");
  if (!ops->is_array()) r.fail_at("/ops", "expected an array with one array of ops per device, " + got(*ops));
  if (num_devices && static_cast<std::size_t>(*num_devices) != ops->size())
    r.fail_at("/ops", "has " + std::to_string(ops->size()) + " device rows, but num_devices is " +
                          std::to_string(*num_devices));
  if (ops->empty()) r.fail_at("/ops", "no devices (expected one array of ops per device)");
  if (ops->size() > static_cast<std::size_t>(kInt32Max)) r.fail_at("/ops", "too many devices");
  s.num_devices = static_cast<int>(ops->size());
  s.ops.resize(ops->size());
  for (std::size_t d = 0; d < ops->size(); ++d) {
    const json& row = (*ops)[d];
    const std::string row_ptr = "/ops/" + std::to_string(d);
    if (!row.is_array()) r.fail_at(row_ptr, "expected an array of ops like [\"0F0\", \"0B0\"], " + got(row));
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::string ptr = row_ptr + "/" + std::to_string(i);
      if (!row[i].is_string()) r.fail_at(ptr, std::string("expected a string like \"2F0\", got ") + row[i].type_name());
      std::string error;
      const auto op = parse_op(row[i].get_ref<const std::string&>(), &error);
      if (!op) r.fail_at(ptr, error);
      s.ops[d].push_back(*op);
    }
  }

  // placement: optional, num_pipelines x num_stages devices.
  if (const auto pl = root.find("placement"); pl != root.end()) {
    given.placement = true;
    given.placement_path = "/placement/0";
    if (!pl->is_array() || pl->empty())
      r.fail_at("/placement", std::string("expected an array with one array of devices per pipeline, got ") +
                                  (pl->is_array() ? "an empty array" : pl->type_name()));
    if (given.num_pipelines && static_cast<std::size_t>(*given.num_pipelines) != pl->size())
      r.fail_at("/placement", "has " + std::to_string(pl->size()) + " pipeline rows, but num_pipelines is " +
                                  std::to_string(*given.num_pipelines));
    for (std::size_t c = 0; c < pl->size(); ++c) {
      const json& row = (*pl)[c];
      const std::string row_ptr = "/placement/" + std::to_string(c);
      if (!row.is_array()) r.fail_at(row_ptr, std::string("expected an array of devices, got ") + row.type_name());
      const std::size_t want = given.num_stages ? static_cast<std::size_t>(*given.num_stages) : (*pl)[0].size();
      if (want == 0) r.fail_at(row_ptr, "has no stages (expected at least one device number)");
      if (row.size() != want)
        r.fail_at(row_ptr, "has " + std::to_string(row.size()) + " stages, expected " + std::to_string(want) +
                               (given.num_stages ? " (num_stages)" : " (like /placement/0)"));
      std::vector<int> devices;
      for (std::size_t st = 0; st < row.size(); ++st) {
        const std::string ptr = row_ptr + "/" + std::to_string(st);
        std::int64_t dev = 0;
        if (!as_int64(row[st], dev))
          r.fail_at(ptr, "expected a device number, " + got(row[st]));
        if (dev < 0 || dev >= s.num_devices)
          r.fail_at(ptr, "device " + row[st].dump() + " out of range [0, " + std::to_string(s.num_devices) + ")");
        devices.push_back(static_cast<int>(dev));
      }
      s.placement.push_back(std::move(devices));
    }
    s.num_pipelines = static_cast<int>(s.placement.size());
    s.num_stages = static_cast<int>(s.placement[0].size());
  }
  OpSource src{source, true, {}};
  finish(s, src, given);
  return s;
}

}  // namespace

Schedule parse_schedule_json(std::string_view text, std::string_view source_name) {
  const std::string source(source_name);
  if (trim(strip_bom(text)).empty()) fail(source, "empty file (expected a JSON object, see docs/schedule-format.md)");
  const json root = parse_json_input(text, source);
  try {
    return read_json(root, source);
  } catch (const json::exception& e) {
    // Every access above is type-checked first; this is a safety net, not a code path.
    fail(source, std::string("unexpected JSON content (") + e.what() + ")");
  }
}

std::string schedule_to_json(const Schedule& s) {
  // Written by hand rather than json::dump(2), which would put every op on its own line:
  // one line per device reads like the CSV and diffs well.
  const auto join = [](const auto& items, auto&& item_text) {
    std::string line = "[";
    for (std::size_t i = 0; i < items.size(); ++i) line += (i ? ", " : "") + item_text(items[i]);
    return line + "]";
  };
  const auto rows = [&](const auto& table, auto&& item_text) {
    if (table.empty()) return std::string("[]");
    std::string out = "[\n";
    for (std::size_t r = 0; r < table.size(); ++r)
      out += "    " + join(table[r], item_text) + (r + 1 < table.size() ? ",\n" : "\n");
    return out + "  ]";
  };
  // Escaping through nlohmann; invalid UTF-8 in a name is replaced rather than thrown on.
  const std::string name = json(s.name).dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out = "{\n";
  out += "  \"format\": \"pipesim-schedule\",\n";
  out += "  \"version\": 1,\n";
  out += "  \"name\": " + name + ",\n";
  out += "  \"num_devices\": " + std::to_string(s.num_devices) + ",\n";
  out += "  \"num_stages\": " + std::to_string(s.num_stages) + ",\n";
  out += "  \"num_pipelines\": " + std::to_string(s.num_pipelines) + ",\n";
  out += "  \"microbatches\": " + std::to_string(s.microbatches) + ",\n";
  out += "  \"iterations\": " + std::to_string(s.iterations) + ",\n";
  out += std::string("  \"blocking_grad_sync\": ") + (s.blocking_grad_sync ? "true" : "false") + ",\n";
  out += "  \"weight_policy\": \"" + std::string(weight_policy_name(s.weight_policy)) + "\",\n";
  out += "  \"microbatch_split\": " + std::to_string(s.microbatch_split) + ",\n";
  out += "  \"placement\": " + rows(s.placement, [](int d) { return std::to_string(d); }) + ",\n";
  out += "  \"ops\": " + rows(s.ops, [](const Op& op) { return "\"" + to_string(op) + "\""; }) + "\n";
  return out + "}\n";
}

}  // namespace pipesim
