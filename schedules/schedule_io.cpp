#include "schedules/schedule_io.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_input.hpp"
#include "core/output_file.hpp"
#include "schedules/op_text.hpp"
#include "schedules/pytorch_format.hpp"

namespace pipesim {
namespace {

using nlohmann::json;

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view strip_bom(std::string_view s) {
  return s.substr(0, 3) == "\xEF\xBB\xBF" ? s.substr(3) : s;
}

// "runs/sched.v2.json" -> "sched.v2": the default schedule name.
std::string stem(std::string_view path) {
  const std::size_t slash = path.find_last_of("/\\");
  if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
  const std::size_t dot = path.rfind('.');
  if (dot != std::string_view::npos && dot > 0) path = path.substr(0, dot);
  // A file name may hold anything but '/'; the schedule's name is printed, so it is escaped.
  return one_line(path.substr(0, 200));
}

std::string lower_extension(const std::string& path) {
  const std::size_t slash = path.find_last_of("/\\");
  const std::size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return {};
  std::string ext = path.substr(dot);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

std::string op_ref(const Op& op) {
  return "pipeline " + std::to_string(op.pipeline) + " stage " + std::to_string(op.stage);
}

// Names op `index` of device `device` in messages, in the terms of the input format:
// "sched.csv:3: cell 5" (cells skip empty ones, so they are remembered) or "sched.json: /ops/2/7".
struct OpSource {
  std::string source;
  bool json = false;
  std::vector<std::vector<int>> cells;  // CSV only: 1-based cell number of each op

  std::string ref(std::size_t d, std::size_t i) const {
    if (json) return "/ops/" + std::to_string(d) + "/" + std::to_string(i);
    return "line " + std::to_string(d + 1) + ", cell " + std::to_string(cells[d][i]);
  }
  std::string at(std::size_t d, std::size_t i) const {
    if (json) return source + ": " + ref(d, i);
    return source + ":" + std::to_string(d + 1) + ": cell " + std::to_string(cells[d][i]);
  }
};

// What the input said explicitly; the rest is inferred from the ops.
struct Explicit {
  std::optional<int> num_stages, num_pipelines, microbatches, iterations;
  bool placement = false;
  std::string placement_path;  // where divisibility problems are reported
};

[[noreturn]] void fail(const std::string& where, const std::string& what) { throw InputError(where + ": " + what); }

// Every op's pipeline / stage must lie inside the placement's num_pipelines x num_stages.
void check_op_ranges(const Schedule& s, const OpSource& src, std::int64_t pipelines, std::int64_t stages) {
  for (std::size_t d = 0; d < s.ops.size(); ++d)
    for (std::size_t i = 0; i < s.ops[d].size(); ++i) {
      const Op& op = s.ops[d][i];
      const std::string text = "'" + to_string(op) + "': ";
      if (op.pipeline >= pipelines)
        fail(src.at(d, i), text + "pipeline " + std::to_string(op.pipeline) + " out of range [0, " +
                               std::to_string(pipelines) + ") (num_pipelines)");
      if (op.stage >= stages)
        fail(src.at(d, i), text + "stage " + std::to_string(op.stage) + " out of range [0, " +
                               std::to_string(stages) + ") (num_stages)");
      if (has_microbatch(op.kind) && op.microbatch < 0) fail(src.at(d, i), text + "negative micro-batch id");
    }
}

// Placement from the ops: each (pipeline, stage) lives where its ops run. Stages and
// pipelines must be numbered densely from 0, and a stage may not appear on two devices.
void infer_placement(Schedule& s, const OpSource& src, const Explicit& given) {
  std::int64_t max_pipeline = -1, max_stage = -1;
  for (const auto& list : s.ops)
    for (const Op& op : list) {
      max_pipeline = std::max<std::int64_t>(max_pipeline, op.pipeline);
      max_stage = std::max<std::int64_t>(max_stage, op.stage);
    }
  const std::int64_t pipelines = given.num_pipelines ? *given.num_pipelines : max_pipeline + 1;
  const std::int64_t stages = given.num_stages ? *given.num_stages : max_stage + 1;
  check_op_ranges(s, src, pipelines, stages);
  std::map<std::pair<int, int>, std::pair<std::size_t, std::size_t>> first;  // -> (device, index)
  for (std::size_t d = 0; d < s.ops.size(); ++d)
    for (std::size_t i = 0; i < s.ops[d].size(); ++i) {
      const Op& op = s.ops[d][i];
      const auto [it, inserted] = first.try_emplace({op.pipeline, op.stage}, d, i);
      if (!inserted && it->second.first != d)
        fail(src.at(d, i), "'" + to_string(op) + "': " + op_ref(op) + " appears on device " + std::to_string(d) +
                               " and on device " + std::to_string(it->second.first) + " (" +
                               src.ref(it->second.first, it->second.second) + "); a stage lives on one device");
    }
  // Checked before allocating: "999999F0" must be an error, not a 4 GB placement table.
  if (static_cast<std::int64_t>(first.size()) != pipelines * stages) {
    std::int64_t expect = 0;  // walk (pipeline, stage) in order to find the first gap
    for (const auto& [key, where] : first) {
      if (key.first * stages + key.second != expect) break;
      ++expect;
    }
    fail(src.source, "pipeline " + std::to_string(expect / stages) + " stage " + std::to_string(expect % stages) +
                         " appears on no device (stages 0.." + std::to_string(stages - 1) + " of pipelines 0.." +
                         std::to_string(pipelines - 1) + " must all have ops)");
  }
  s.num_pipelines = static_cast<int>(pipelines);
  s.num_stages = static_cast<int>(stages);
  s.placement.assign(static_cast<std::size_t>(pipelines), std::vector<int>(static_cast<std::size_t>(stages)));
  for (const auto& [key, where] : first)
    s.placement[static_cast<std::size_t>(key.first)][static_cast<std::size_t>(key.second)] =
        static_cast<int>(where.first);
}

// Shared tail of both readers: placement, the consistency checks, and inferred counts.
void finish(Schedule& s, const OpSource& src, const Explicit& given) {
  if (s.total_ops() == 0) fail(src.source, "no ops at all (an empty schedule)");
  if (!given.placement) {
    infer_placement(s, src, given);
  } else {
    check_op_ranges(s, src, s.num_pipelines, s.num_stages);
    for (std::size_t d = 0; d < s.ops.size(); ++d)
      for (std::size_t i = 0; i < s.ops[d].size(); ++i) {
        const Op& op = s.ops[d][i];
        if (s.device_of(op) != static_cast<int>(d))
          fail(src.at(d, i), "'" + to_string(op) + "' is listed on device " + std::to_string(d) +
                                 ", but placement puts " + op_ref(op) + " on device " +
                                 std::to_string(s.device_of(op)));
      }
  }
  // Schedule::chunks_per_device() needs every device of pipeline 0 to hold equally many
  // chunks; rejecting it here keeps a bad file from tripping an assertion later.
  const std::set<int> spanned(s.placement[0].begin(), s.placement[0].end());
  if (s.num_stages % static_cast<int>(spanned.size()) != 0)
    fail(given.placement ? src.source + ": " + given.placement_path : src.source,
         "pipeline 0 spans " + std::to_string(spanned.size()) + " devices, but num_stages (" +
             std::to_string(s.num_stages) + ") is not a multiple of that");
  // Iterations: one OptStep per stage replica per iteration. Micro-batches: distinct ids
  // in the whole schedule per iteration (ids are global across pipelines, spec §2).
  std::map<std::pair<int, int>, int> opt_steps;
  std::set<int> ids;
  for (const auto& list : s.ops)
    for (const Op& op : list) {
      if (op.kind == OpKind::OptStep) ++opt_steps[{op.pipeline, op.stage}];
      if (is_microbatch_op(op.kind)) ids.insert(op.microbatch);
    }
  const std::size_t most_microbatches = ids.size();
  int iterations = 1;
  for (const auto& [key, count] : opt_steps) iterations = std::max(iterations, count);
  s.iterations = given.iterations ? *given.iterations : iterations;
  // The engine keeps a table per iteration: an iteration count the ops cannot fill is a typo.
  if (static_cast<std::size_t>(s.iterations) > s.total_ops())
    fail(src.source + ": /iterations", "iterations (" + std::to_string(s.iterations) + ") is more than the " +
                                           std::to_string(s.total_ops()) + " ops of the schedule");
  const auto per_iteration = static_cast<std::size_t>(s.iterations);
  // At least 1: a schedule of stage ops only still has a (positive) micro-batch count.
  s.microbatches = given.microbatches ? *given.microbatches
                                      : std::max(1, static_cast<int>((most_microbatches + per_iteration - 1) / per_iteration));
  // Iteration t owns ids t*m .. t*m+m-1: an id past m x iterations belongs to no iteration
  // (and "0F2000000000" alone would make the engine size its per-iteration table by it).
  const std::int64_t ids_end = std::int64_t{s.microbatches} * s.iterations;
  for (std::size_t d = 0; d < s.ops.size(); ++d)
    for (std::size_t i = 0; i < s.ops[d].size(); ++i) {
      const Op& op = s.ops[d][i];
      if (has_microbatch(op.kind) && op.microbatch >= ids_end)
        fail(src.at(d, i), "'" + to_string(op) + "': micro-batch id " + std::to_string(op.microbatch) +
                               " is not below micro-batches x iterations (" + std::to_string(s.microbatches) + " x " +
                               std::to_string(s.iterations) + "); number them from 0, iteration t using t*m .. t*m+m-1");
    }
}

// ---- JSON helpers ------------------------------------------------------------------------

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

// PyTorch's FSDP actions ("0UNSHARD", "0RESHARD"): kept as text for the round trip.
bool is_fsdp_action(std::string_view cell) {
  std::size_t digits = 0;
  while (digits < cell.size() && cell[digits] >= '0' && cell[digits] <= '9') ++digits;
  const std::string_view rest = cell.substr(digits);
  return digits > 0 && (rest.rfind("UNSHARD", 0) == 0 || rest.rfind("RESHARD", 0) == 0);
}

// The ops of one CSV cell: one op, or PyTorch's "(0F7;7B3)OVERLAP_F_B" (its sub-actions, run
// in order). Fails with the cell's place.
void parse_cell(std::string_view cell, const std::string& where, std::vector<Op>& out) {
  constexpr std::string_view kOverlap = "OVERLAP_F_B";
  if (cell.front() != '(') {
    std::string error;
    const auto op = parse_op(cell, &error);
    if (!op) fail(where, error);
    out.push_back(*op);
    return;
  }
  const std::size_t close = cell.find(')');
  if (close == std::string_view::npos || cell.substr(close + 1) != kOverlap)
    fail(where, quote(cell) + ": expected an overlapped pair like (0F7;7B3)OVERLAP_F_B");
  const std::string_view inner = cell.substr(1, close - 1);
  std::size_t count = 0;
  for (std::size_t start = 0; start <= inner.size();) {
    std::size_t end = inner.find(';', start);
    if (end == std::string_view::npos) end = inner.size();
    const std::string_view sub = trim(inner.substr(start, end - start));
    start = end + 1;
    if (sub.empty()) continue;
    std::string error;
    const auto op = parse_op(sub, &error);
    if (!op) fail(where, "in " + std::string(cell) + ": " + error);
    if (!is_microbatch_op(op->kind))
      fail(where, quote(cell) + ": an OVERLAP_F_B cell holds compute ops only (F, B, I, W), got '" +
                      std::string(sub) + "'");
    out.push_back(*op);
    ++count;
  }
  if (count == 0) fail(where, quote(cell) + ": an OVERLAP_F_B cell with no ops");
}

}  // namespace

Schedule parse_schedule_csv(std::string_view text, std::string_view source_name) {
  const std::string source(source_name);
  text = strip_bom(text);
  if (trim(text).empty()) fail(source, "empty file (expected one row of ops per device, like 0F0,0F1,,0B0)");
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  // Trailing blank lines are the file's end; a blank line in between is a device without ops.
  while (!lines.empty() && trim(lines.back()).empty()) lines.pop_back();

  Schedule s;
  s.name = stem(source_name);
  s.num_devices = static_cast<int>(lines.size());
  s.ops.resize(lines.size());
  OpSource src{source, false, std::vector<std::vector<int>>(lines.size())};
  CellLayout& layout = s.cells;
  layout.column.resize(lines.size());
  layout.width.resize(lines.size());
  bool aligned = false;  // a blank, an overlapped or a kept cell: the layout is worth keeping
  for (std::size_t d = 0; d < lines.size(); ++d) {
    const std::string_view line = lines[d];
    int cell_no = 0;
    for (std::size_t start = 0; start <= line.size();) {
      std::size_t end = line.find(',', start);
      if (end == std::string_view::npos) end = line.size();
      std::string_view cell = trim(line.substr(start, end - start));
      start = end + 1;
      ++cell_no;
      if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') cell = trim(cell.substr(1, cell.size() - 2));
      const auto column = static_cast<std::uint32_t>(cell_no - 1);
      if (cell.empty()) {  // an idle step in PyTorch's dump
        aligned |= !trim(line).empty();
        continue;
      }
      if (is_fsdp_action(cell)) {
        layout.kept.push_back({static_cast<int>(d), column, std::string(cell)});
        aligned = true;
        continue;
      }
      const std::size_t before = s.ops[d].size();
      parse_cell(cell, source + ":" + std::to_string(d + 1) + ": cell " + std::to_string(cell_no), s.ops[d]);
      aligned |= s.ops[d].size() - before > 1;
      for (std::size_t k = before; k < s.ops[d].size(); ++k) {
        src.cells[d].push_back(cell_no);
        layout.column[d].push_back(column);
      }
    }
    layout.width[d] = trim(line).empty() ? 0 : static_cast<std::uint32_t>(cell_no);
  }
  if (!aligned) layout = CellLayout{};  // one op per cell: nothing to keep
  finish(s, src, Explicit{});
  return s;
}

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

Schedule read_schedule_file(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext != ".csv" && ext != ".json")
    throw InputError(path + ": unknown schedule file extension " + quote(ext) + " (expected .csv or .json)");
  const std::string text = read_input_file(path, kScheduleFileInput);
  return ext == ".csv" ? parse_schedule_csv(text, path) : parse_schedule_json(text, path);
}

void write_schedule_file(const Schedule& schedule, const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext != ".csv" && ext != ".json")
    throw InputError(path + ": unknown schedule file extension " + quote(ext) + " (expected .csv or .json)");
  OutputFile file(path, "");
  file.stream() << (ext == ".csv" ? schedule_to_csv(schedule) : schedule_to_json(schedule));
  file.commit();
}

std::string schedule_to_csv(const Schedule& schedule) {
  return csv_rows(schedule, [](const Op& op, std::string& out) { append_op_text(out, op); }, true);
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
