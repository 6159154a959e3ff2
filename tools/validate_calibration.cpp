#include "tools/validate_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <system_error>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json_input.hpp"
#include "core/json_object.hpp"
#include "core/units.hpp"
#include "tools/table.hpp"

namespace pipesim {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

inline constexpr InputKind kValidationJsonInput{"validate --json output", 64 * kMiB};

// validate --json's object for one schedule: the fields only it has.
bool is_validation(const json& j) {
  return j.is_object() && j.contains("schedule") && j.contains("measured") && j.contains("time_per_iteration_error");
}

// One schedule object, at `path` of `source` (validate's output: fields this reader does not
// need are not checked).
void add_validation(CalibrationRuns& runs, const json& value, const std::string& source, const std::string& path) {
  const JsonObject v(value, source, path);
  const std::string backend = v.text("backend"), model = v.text("model");
  const json& use = v.at("core_use");
  if (!use.is_null() && !use.is_object())
    json_fail(v.where("core_use"), "expected an object or null; got " + json_shown(use));
  const JsonObject time = v.object("prediction_interval").object("time_per_iteration_s");
  PastPrediction past;
  past.p5 = time.number("p5", true, "seconds");
  past.p50 = time.number("p50", true, "seconds");
  past.p95 = time.number("p95", true, "seconds");
  if (!(past.p5 <= past.p50 && past.p50 <= past.p95)) json_fail(time.where(), "expected p5 <= p50 <= p95");
  past.measured = v.object("measured").number("time_per_iteration_s", true, "seconds");
  runs.scores[calibration_group(backend, model, use.is_object())].push_back(conformity_score(past));
}

// The *.json files below a folder, sorted (the order scores are added in, so reruns agree).
std::vector<fs::path> json_files_below(const std::string& folder) {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(folder, fs::directory_options::skip_permission_denied, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".json" || !it->is_regular_file(ec)) continue;
    out.push_back(it->path());
    if (static_cast<int>(out.size()) > kMaxCalibrationFiles)
      throw InputError("--calibration: " + quote(folder, 256) + ": more than " + std::to_string(kMaxCalibrationFiles) +
                       " .json files below it (name the folders of past validations)");
  }
  if (ec) throw InputError("--calibration: cannot read the folder " + quote(folder, 256) + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::string calibration_group(const std::string& backend, const std::string& model, bool shared_cores) {
  return backend + " " + model + (shared_cores ? ", device threads sharing cores" : "");
}

int CalibrationRuns::runs() const {
  std::size_t n = 0;
  for (const auto& [group, s] : scores) n += s.size();
  return static_cast<int>(n);
}

bool add_calibration_text(CalibrationRuns& runs, const std::string& text, const std::string& source, bool must) {
  json root;
  if (must) {
    root = parse_json_input(text, source);
  } else {
    try {
      root = parse_json_input(text, source);
    } catch (const InputError&) {
      return false;  // in a folder: not validate's JSON (an empty file a failed run left)
    }
  }
  const std::string expected = ": expected validate --json output (a schedule's object, or {\"schedules\": [...]})";
  if (root.is_object() && root.contains("schedules") && root.at("schedules").is_array()) {
    const json& all = root.at("schedules");
    if (std::none_of(all.begin(), all.end(), is_validation)) {
      if (must) throw InputError(source + ": /schedules" + expected);
      return false;
    }
    for (std::size_t i = 0; i < all.size(); ++i)
      add_validation(runs, all[i], source, "/schedules/" + std::to_string(i));
  } else if (is_validation(root)) {
    add_validation(runs, root, source, "");
  } else {
    if (must) throw InputError(source + expected);
    return false;
  }
  ++runs.files;
  return true;
}

CalibrationRuns read_calibration(const std::vector<std::string>& paths) {
  CalibrationRuns runs;
  std::set<fs::path> seen;
  const auto read = [&](const fs::path& file, bool must) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(file, ec);
    if (!seen.insert(ec ? file : canonical).second) return;
    if (!add_calibration_text(runs, read_input_file(file.string(), kValidationJsonInput), file.string(), must))
      ++runs.skipped_files;
  };
  for (const std::string& path : paths) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status))
      throw InputError("--calibration: " + quote(path, 256) + ": no such file or folder (past validate --json outputs)");
    if (fs::is_directory(status)) {
      for (const fs::path& file : json_files_below(path)) read(file, false);
    } else {
      read(path, true);
    }
  }
  return runs;
}

Calibrated calibrate(const CalibrationRuns& runs, const std::string& group, const Percentiles& time,
                     double measured) {
  Calibrated c;
  c.group = group;
  const auto it = runs.scores.find(group);
  if (it == runs.scores.end()) return c;
  c.runs = static_cast<int>(it->second.size());
  c.widening = conformal_widening(it->second);
  if (c.widening) {
    c.range = calibrated_range(time, *c.widening);
    c.inside = c.range.contains(measured);
  }
  return c;
}

std::string calibration_text(const CalibrationRuns& runs) {
  std::string out = "calibration: " + std::to_string(runs.runs()) + " past runs in " + std::to_string(runs.files) +
                    (runs.files == 1 ? " file" : " files");
  if (runs.skipped_files > 0)
    out += " (" + std::to_string(runs.skipped_files) + (runs.skipped_files == 1 ? " file" : " files") +
           " skipped: not validate's JSON)";
  out += "\n";
  for (const auto& [group, scores] : runs.scores) {
    out += "  " + one_line(group) + ": " + std::to_string(scores.size()) + " runs, ";
    const std::optional<double> q = conformal_widening(scores);
    out += q ? "[p5, p95] " + std::string(*q >= 0 ? "widened" : "narrowed") + " by " + format_percent(std::abs(*q)) +
                   " of p50 each way\n"
             : "too few for a calibrated [p5, p95] (" + std::to_string(min_calibration_runs()) + " needed)\n";
  }
  return out;
}

nlohmann::ordered_json calibration_json(const CalibrationRuns& runs) {
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const auto& [group, scores] : runs.scores) {
    const std::optional<double> q = conformal_widening(scores);
    groups.push_back({{"group", group}, {"runs", scores.size()}, {"widening", q ? nlohmann::ordered_json(*q) : nullptr}});
  }
  return {{"runs", runs.runs()}, {"files", runs.files}, {"skipped_files", runs.skipped_files}, {"groups", groups}};
}

nlohmann::ordered_json calibrated_json(const Calibrated& c) {
  nlohmann::ordered_json j;
  j["group"] = c.group;
  j["calibration_runs"] = c.runs;
  j["widening"] = c.widening ? nlohmann::ordered_json(*c.widening) : nullptr;
  j["time_per_iteration_s"] =
      c.widening ? nlohmann::ordered_json{{"p5", c.range.p5 * 1e-9}, {"p95", c.range.p95 * 1e-9}} : nullptr;
  j["inside"] = c.widening ? nlohmann::ordered_json(c.inside) : nullptr;
  return j;
}

std::string calibrated_range_text(const Calibrated& c) {
  if (!c.widening)
    return "- (" + std::to_string(c.runs) + " of " + std::to_string(min_calibration_runs()) + " runs)";
  return format_duration(static_cast<Tick>(std::llround(c.range.p5))) + " .. " +
         format_duration(static_cast<Tick>(std::llround(c.range.p95)));
}

}  // namespace pipesim
