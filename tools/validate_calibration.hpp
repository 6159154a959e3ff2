#pragma once
// validate --calibration PATH: past `validate --json` outputs of this machine, whose errors
// against their own sampled intervals widen the new ones (assess/calibration.hpp).
//
// A PATH is a file, or a folder searched (recursively, in sorted order) for *.json files.
// A named file must be validate's JSON (one object, or {"schedules": [...]}); in a folder,
// JSON files that are not (Chrome traces, profiles, an empty file a failed run left) are
// skipped and counted. Every schedule object in them is one past run, of the group
// calibration_group names: its backend and model, and whether its device threads shared
// cores (its "core_use" object, set with more device threads than cores), the things that
// make one machine's errors alike. A new validation is calibrated on its group's runs only.
// Bad input (a named file that is not validate's JSON, a field missing or out of range) is an
// InputError naming the file and the JSON path.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "assess/calibration.hpp"
#include "assess/prediction_interval.hpp"

namespace pipesim {

inline constexpr int kMaxCalibrationFiles = 10000;  // in all the folders together

// "cpu gpt-tiny" or "cpu gpt-tiny, device threads sharing cores".
std::string calibration_group(const std::string& backend, const std::string& model, bool shared_cores);

struct CalibrationRuns {
  std::map<std::string, std::vector<double>> scores;  // per group, conformity_score of each past run
  int files = 0;          // read
  int skipped_files = 0;  // in folders, not validate's JSON
  int runs() const;
};

// Reads every path (each file once, however often it is named). InputError as above, and for
// a path that does not exist or a folder with more than kMaxCalibrationFiles *.json files.
CalibrationRuns read_calibration(const std::vector<std::string>& paths);
// The past runs of one validate --json text (`source` names it in errors). `must`: a text
// that is not validate's JSON is an InputError; otherwise it is not counted and false is
// returned (also for text that is no JSON at all).
bool add_calibration_text(CalibrationRuns& runs, const std::string& text, const std::string& source, bool must);

// One validation's calibrated interval.
struct Calibrated {
  std::string group;
  int runs = 0;                    // its group's past runs
  std::optional<double> widening;  // Q (a fraction of p50); none: fewer than min_calibration_runs()
  CalibratedRange range;           // ns; when widening
  bool inside = false;             // the measured time per iteration inside `range`
};
Calibrated calibrate(const CalibrationRuns& runs, const std::string& group, const Percentiles& time_per_iteration,
                     double measured);

// "calibration: 126 past runs in 24 files (2 files skipped: not validate's JSON)" and a
// line per group: "  cpu gpt-tiny: 118 runs, [p5, p95] widened by 6.4 % of p50 each way".
std::string calibration_text(const CalibrationRuns& runs);
// {"runs", "files", "skipped_files", "groups": [{"group", "runs", "widening"}, ...]}; widening
// null without enough runs.
nlohmann::ordered_json calibration_json(const CalibrationRuns& runs);
// {"group", "calibration_runs", "widening", "time_per_iteration_s": {"p5", "p95"}, "inside"};
// widening, the range and inside are null without enough runs.
nlohmann::ordered_json calibrated_json(const Calibrated& c);
// "1.20 s .. 1.31 s", or "- (5 of 9 runs)" without enough.
std::string calibrated_range_text(const Calibrated& c);

}  // namespace pipesim
