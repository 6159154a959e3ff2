// Schedule files: the CSV format both ways, and reading or writing a file by its extension
// (the JSON format: schedules/schedule_json.cpp; what both readers share:
// schedules/schedule_reading.hpp).
#include "schedules/schedule_io.hpp"

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/output_file.hpp"
#include "schedules/op_text.hpp"
#include "schedules/pytorch_format.hpp"
#include "schedules/schedule_reading.hpp"

namespace pipesim {
namespace {

using namespace schedule_reading;

std::string lower_extension(const std::string& path) {
  const std::size_t slash = path.find_last_of("/\\");
  const std::size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return {};
  std::string ext = path.substr(dot);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
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

}  // namespace pipesim
