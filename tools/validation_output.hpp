#pragma once
// What `pipesim validate` (tools/cmd_validate.cpp) knows of one schedule once it ran, and how
// it is written out: the tables a person reads, the JSON (docs/json.md), the Chrome trace of
// both timelines and the HTML report.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "assess/prediction_interval.hpp"
#include "cost_models/model_spec.hpp"
#include "executor/executor.hpp"
#include "executor/shared_layout.hpp"
#include "schedules/schedule.hpp"
#include "sim/metrics.hpp"
#include "sim/resources.hpp"
#include "sim/timeline.hpp"
#include "tools/command_files.hpp"
#include "tools/validate_calibration.hpp"
#include "tools/validate_core_speeds.hpp"
#include "tools/validate_core_use.hpp"
#include "tools/validate_replay.hpp"
#include "traces/validation.hpp"

namespace pipesim {

// One schedule, predicted and measured (one run of it: with --runs N, N of these in a row).
struct Validation {
  Schedule schedule;
  int run = 0;      // --runs N > 1: which run of the schedule, 1..N; 0: its only one
  int warmup = 0;   // the schedule's first iterations, run but not counted (iteration_window)
  int counted = 1;  // the iterations the time per iteration is measured over
  Timeline predicted_timeline;
  Metrics predicted;
  MeasuredRun measured_run;
  Metrics measured;
  PredictionReport report;
  ExecutorLayout layout;    // where the run's devices ran: threads on cores, virtual devices on a GPU
  SharedHardware hardware;  // what the prediction shared (the executor's layout, core speeds)
  PredictionInterval interval;
  CoreSpeeds speeds_before, speeds_after;  // cpu, --core-speeds measure: the probes either side of the run
  // cpu, more device threads than cores: how much of the cores' time ops filled, each way.
  std::optional<CoreUse> core_use;
  Replay replay;        // the error split: the simulator on the run's own times
  std::string cost_label;  // its prediction's cost model (ProfiledCostModel::label)
  // Its footprint (tools/validate_footprint.hpp): the blocks its busiest device holds, and
  // those the profile timed the block within (0: a profile that does not say).
  int device_blocks = 0, profiled_blocks = 0;
  bool inside = false;  // the measured time per iteration inside the interval's [p5, p95]
  // --calibration: the interval widened by past validations' misses (tools/validate_calibration.hpp).
  std::optional<Calibrated> calibrated;
  bool pass = false;    // its error within --tolerance
};

// How the outputs name a validation: its schedule, and "#k" for run k of several.
std::string validation_label(const Validation& v);

// With --runs N > 1, a line per schedule: each run's measured time per iteration and error,
// how far the runs spread ((max - min) / median), how many are within `tolerance`; and the
// warning when the spread is above the tolerance (the machine's own noise is larger than what
// the verdict asks). None without repeated runs.
std::vector<std::string> runs_lines(const std::vector<Validation>& all, double tolerance);
std::vector<std::string> runs_warnings(const std::vector<Validation>& all, double tolerance);
// Every warning about the runs themselves, in this order: the runs of --runs spreading more
// than `tolerance` (runs_warnings), on the CPU a schedule whose devices hold another number
// of blocks than its profile timed the block within (footprint_warning), and per run the
// cores' speed moving during it (drift_warning) and, with devices sharing cores, the cores'
// time its ops filled (core_use_warning).
std::vector<std::string> validation_warnings(const std::vector<Validation>& all, const ModelSpec& model,
                                             const std::string& backend, double tolerance);
// {"schedule": ..., "runs": N, "measured_time_per_iteration_s": [...], "errors": [...], "spread": ...}
// per schedule run more than once; an empty array otherwise.
nlohmann::ordered_json runs_json(const std::vector<Validation>& all, double tolerance);

// What the outputs name besides the validations: the command's settings.
struct ValidationSettings {
  std::string model, backend, optimizer;
  int micro_batch_size = 1;
  double tolerance = 0;  // a fraction
  std::string cost_label;  // the validations' cost models, each once ("; " between them)
};

// "cost model: LABEL\n", or with a profile per footprint "cost models, a profile per
// footprint:\n  LABEL\n  LABEL\n".
std::string cost_models_text(const std::vector<std::string>& labels);
// Which iterations the time per iteration covers (iteration_window, sim/metrics.hpp).
std::string window_line(const Validation& v);
// Per schedule: times, error, interval, bubble, peak memory, versions, verdict.
std::string summary_table(const std::vector<Validation>& all);
// --calibration: each validation's calibrated interval, on the past runs of its group (its
// backend and model, and whether its device threads shared cores); a warning for each
// validation whose group has too few.
std::vector<std::string> calibrate_all(std::vector<Validation>& all, const CalibrationRuns& runs,
                                       const std::string& backend, const std::string& model);
// The schedules whose plain bubble (every op at its mean) lies below their interval's p10,
// and why (ops that vary make devices wait on each other, which ops at their means never
// do): a line to print under the summary table; empty when there are none.
std::string bubble_note(const std::vector<Validation>& all);
// Per schedule and op kind: predicted and measured medians, |error| median and p90, bias.
std::string kind_table(const std::vector<Validation>& all);

// The error split (tools/validate_replay.hpp): per schedule, the replay, the simulator's part
// and the cost model's part of the error, the hand-offs seen.
std::string replay_table(const std::vector<Validation>& all);
// What the split says of each schedule off by more than `tolerance` (a fraction), a line
// each: the simulator's part within the tolerance (the miss is the cost model's: the run's
// op and message times against the profile's), or not (the simulator misses how the run
// went even on its own times). Empty when every schedule is within the tolerance.
std::string replay_advice(const std::vector<Validation>& all, double tolerance);

// How many schedules passed and how many lie inside their interval (and, with --calibration,
// inside their calibrated one, of those that have one).
struct Tally {
  std::size_t failed = 0, inside = 0, total = 0;
  std::size_t calibrated_inside = 0, calibrated = 0;
  std::string failures;  // "chimera -7.20 %, amp +9.10 %"
};
Tally tally(const std::vector<Validation>& all);
// The coverage line (both, with --calibration) and the verdict line.
std::string verdict_text(const Tally& t, double tolerance, bool versions_match);

// One schedule's object of `validate --json`.
nlohmann::ordered_json validation_json(const Validation& v, const ValidationSettings& settings);
// Predicted and measured in one Chrome trace; closes the file.
void write_trace(OutputFile& file, const Validation& v);
// The HTML page: the intervals, each schedule's error tables and both timelines; closes it.
void write_report(OutputFile& file, const std::vector<Validation>& all, const ValidationSettings& settings);

}  // namespace pipesim
