#include "tools/validation_output.hpp"

#include <algorithm>
#include <cmath>

#include "core/percentile.hpp"
#include "schedules/op_text.hpp"
#include "tools/report.hpp"
#include "tools/run_flags.hpp"
#include "tools/sample_flags.hpp"
#include "tools/table.hpp"
#include "tools/validate_footprint.hpp"
#include "tools/validate_verdict.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/html_report.hpp"
#include "traces/html_validation.hpp"
#include "traces/svg.hpp"
#include "core/units.hpp"

namespace pipesim {
namespace {

// "op times -12.01 %, links and collectives -0.64 %": the cost model's part, split.
std::string cost_parts(const Replay& r) {
  return "op times " + format_signed_percent(r.cost_ops_part) + ", links and collectives " +
         format_signed_percent(r.cost_comm_part);
}

// The report's line of the error split.
std::string replay_line(const Validation& v) {
  const Replay& r = v.replay;
  return validation_label(v) + ": replayed on the run's own op times and hand-offs, the simulator gives " +
         format_duration(r.time_per_iteration) + ": its part of the error " + format_signed_percent(r.simulator_part) +
         ", the cost model's " + format_signed_percent(r.cost_part) + " (" + cost_parts(r) + ")";
}

std::string versions_cell(const PredictionReport& r) {
  if (r.versions_match()) return "match (" + std::to_string(r.versions_compared) + " ops)";
  return std::to_string(r.version_mismatch_count) + " of " + std::to_string(r.versions_compared) + " DIFFER";
}

}  // namespace

std::string validation_label(const Validation& v) {
  return v.run > 0 ? v.schedule.name + " #" + std::to_string(v.run) : v.schedule.name;
}

namespace {

// One schedule run more than once (--runs): its runs in order, how far their measured times
// per iteration spread ((max - min) / median) and how many passed.
struct RepeatedRuns {
  std::string name;
  std::vector<const Validation*> runs;
  double spread = 0;
  int within = 0;
};

std::vector<RepeatedRuns> repeated_runs(const std::vector<Validation>& all) {
  std::vector<RepeatedRuns> out;
  for (const Validation& v : all) {
    if (v.run == 0) continue;
    if (v.run == 1 || out.empty()) out.push_back({v.schedule.name, {}});
    out.back().runs.push_back(&v);
    out.back().within += v.pass;
  }
  for (RepeatedRuns& r : out) {
    std::vector<double> t;
    for (const Validation* v : r.runs) t.push_back(static_cast<double>(v->measured.time_per_iteration));
    std::sort(t.begin(), t.end());
    const double median = percentile(t, 0.5);
    r.spread = median > 0 ? (t.back() - t.front()) / median : 0;
  }
  return out;
}

}  // namespace

std::vector<std::string> runs_lines(const std::vector<Validation>& all, double tolerance) {
  std::vector<std::string> out;
  for (const RepeatedRuns& r : repeated_runs(all)) {
    std::string times, errors;
    for (const Validation* v : r.runs) {
      times += (times.empty() ? "" : ", ") + format_duration(v->measured.time_per_iteration);
      errors += (errors.empty() ? "" : ", ") + format_signed_percent(v->report.time_per_iteration_error);
    }
    out.push_back(one_line(r.name) + ": " + std::to_string(r.runs.size()) + " runs measured " + times +
                  " per iteration (spread " + format_percent(r.spread) + ", (max - min) / median); errors " + errors +
                  "; within " + format_percent(tolerance) + ": " + std::to_string(r.within) + " of " +
                  std::to_string(r.runs.size()));
  }
  return out;
}

std::vector<std::string> runs_warnings(const std::vector<Validation>& all, double tolerance) {
  std::vector<std::string> out;
  for (const RepeatedRuns& r : repeated_runs(all))
    if (r.spread > tolerance)
      out.push_back("the " + std::to_string(r.runs.size()) + " runs of " + one_line(r.name) + " spread " +
                    format_percent(r.spread) + " from one another, more than the tolerance " + format_percent(tolerance) +
                    ": on this machine now an error within it cannot be told from the runs' own noise");
  return out;
}

nlohmann::ordered_json runs_json(const std::vector<Validation>& all, double tolerance) {
  auto out = nlohmann::ordered_json::array();
  for (const RepeatedRuns& r : repeated_runs(all)) {
    auto times = nlohmann::ordered_json::array(), errors = nlohmann::ordered_json::array();
    for (const Validation* v : r.runs) {
      times.push_back(static_cast<double>(v->measured.time_per_iteration) * 1e-9);
      errors.push_back(v->report.time_per_iteration_error);
    }
    out.push_back({{"schedule", r.name},
                   {"runs", r.runs.size()},
                   {"measured_time_per_iteration_s", times},
                   {"errors", errors},
                   {"spread", r.spread},
                   {"within_tolerance", r.within},
                   {"tolerance", tolerance}});
  }
  return out;
}

std::string cost_models_text(const std::vector<std::string>& labels) {
  if (labels.size() == 1) return "cost model: " + one_line(labels.front()) + "\n";
  std::string out = "cost models, a profile per footprint:\n";
  for (const std::string& label : labels) out += "  " + one_line(label) + "\n";
  return out;
}

// Which iterations the time per iteration covers (iteration_window, sim/metrics.hpp).
std::string window_line(const Validation& v) {
  const int n = v.schedule.iterations;
  if (v.warmup == 0 && n == 1) return "time per iteration: the whole run (one iteration, no warm-up)";
  return "time per iteration: the last " + std::to_string(v.counted) + " of " + std::to_string(n) + " iterations (" +
         (v.warmup == 0 ? std::string("the first one's fill") : std::to_string(v.warmup) + " warm-up") +
         " not counted, predicted or measured)";
}

std::string summary_table(const std::vector<Validation>& all) {
  const bool calibrated = std::any_of(all.begin(), all.end(), [](const Validation& v) { return v.calibrated.has_value(); });
  Table t;
  t.add_column("schedule", Table::Align::Left);
  for (const char* c : {"time/iter predicted", "measured", "error", "predicted p5 .. p95", "inside"}) t.add_column(c);
  if (calibrated)
    for (const char* c : {"calibrated p5 .. p95", "inside"}) t.add_column(c);
  for (const char* c : {"bubble pred.", "p10 .. p90", "meas.", "peak act. pred.", "meas."}) t.add_column(c);
  t.add_column("weight versions", Table::Align::Left);
  t.add_column("verdict", Table::Align::Left);
  for (const Validation& v : all) {
    std::vector<std::string> row{validation_label(v),
                                 format_duration(v.predicted.time_per_iteration),
                                 format_duration(v.measured.time_per_iteration),
                                 format_signed_percent(v.report.time_per_iteration_error),
                                 time_range(v.interval),
                                 v.inside ? "yes" : "no"};
    if (calibrated) {
      row.push_back(v.calibrated ? calibrated_range_text(*v.calibrated) : "-");
      row.push_back(v.calibrated && v.calibrated->widening ? (v.calibrated->inside ? "yes" : "no") : "-");
    }
    for (std::string cell :
         {format_percent(v.predicted.bubble_ratio),
          format_percent(v.interval.bubble_ratio.p10) + " .. " + format_percent(v.interval.bubble_ratio.p90),
          format_percent(v.measured.bubble_ratio), format_bytes(static_cast<double>(max_peak_activation_bytes(v.predicted))),
          format_bytes(static_cast<double>(max_peak_activation_bytes(v.measured))), versions_cell(v.report),
          std::string(v.pass && v.report.versions_match() ? "PASS" : "FAIL")})
      row.push_back(std::move(cell));
    t.add_row(row);
  }
  return t.render();
}

std::vector<std::string> validation_warnings(const std::vector<Validation>& all, const ModelSpec& model,
                                             const std::string& backend, double tolerance) {
  std::vector<std::string> warnings = runs_warnings(all, tolerance);
  const auto add = [&](std::string w) {
    if (!w.empty()) warnings.push_back(std::move(w));
  };
  if (backend == "cpu")  // a GPU block outgrows its caches anyway (docs/profile-format.md)
    for (const Validation& v : all)
      if (v.run <= 1) add(footprint_warning(model, v.schedule, v.profiled_blocks));
  for (const Validation& v : all) {
    add(drift_warning(one_line(validation_label(v)), v.speeds_before, v.speeds_after, tolerance));
    if (v.core_use) add(core_use_warning(one_line(validation_label(v)), *v.core_use, tolerance));
  }
  return warnings;
}

std::vector<std::string> calibrate_all(std::vector<Validation>& all, const CalibrationRuns& runs,
                                       const std::string& backend, const std::string& model) {
  std::vector<std::string> warnings;
  for (Validation& v : all) {
    v.calibrated = calibrate(runs, calibration_group(backend, model, v.core_use.has_value()),
                             v.interval.time_per_iteration, static_cast<double>(v.measured.time_per_iteration));
    if (!v.calibrated->widening)
      warnings.push_back("--calibration: " + one_line(validation_label(v)) + " (" + one_line(v.calibrated->group) +
                         "): " + std::to_string(v.calibrated->runs) + " past runs, " +
                         std::to_string(min_calibration_runs()) + " needed: no calibrated interval");
  }
  return warnings;
}

std::string bubble_note(const std::vector<Validation>& all) {
  std::string names;
  for (const Validation& v : all)
    if (v.predicted.bubble_ratio < v.interval.bubble_ratio.p10)
      names += (names.empty() ? "" : ", ") + one_line(validation_label(v)) + " " +
               format_percent(v.predicted.bubble_ratio) + " against " + format_percent(v.interval.bubble_ratio.p10) +
               " .. " + format_percent(v.interval.bubble_ratio.p90);
  if (names.empty()) return {};
  return "bubble: the plain prediction lies below its interval (" + names +
         "). It takes every op at its mean; the interval draws each op from its profiled spread, and a device "
         "that waits for the slower of two ops waits longer than for two ops at their means (Jensen's "
         "inequality): compare the measured bubble with the interval\n";
}

Tally tally(const std::vector<Validation>& all) {
  Tally t;
  t.total = all.size();
  for (const Validation& v : all) {
    t.inside += v.inside;
    if (v.calibrated && v.calibrated->widening) {
      ++t.calibrated;
      t.calibrated_inside += v.calibrated->inside;
    }
    if (v.pass) continue;
    ++t.failed;
    t.failures += (t.failures.empty() ? "" : ", ") + one_line(validation_label(v)) + " " +
                  format_signed_percent(v.report.time_per_iteration_error);
  }
  return t;
}

std::string verdict_text(const Tally& t, double tolerance, bool versions_match) {
  const auto share = [](std::size_t part, std::size_t whole) {
    return std::to_string(part) + " of " + std::to_string(whole) + " (" +
           format_percent(static_cast<double>(part) / static_cast<double>(whole)) + ")\n";
  };
  std::string coverage = "measured inside the predicted [p5, p95]: " + share(t.inside, t.total);
  if (t.calibrated > 0) coverage += "measured inside the calibrated [p5, p95]: " + share(t.calibrated_inside, t.calibrated);
  const bool pass = t.failed == 0 && versions_match;
  std::string out = coverage + "verdict: " + (pass ? "PASS" : "FAIL") + " (time per iteration within " +
                    format_percent(tolerance) + ": " + std::to_string(t.total - t.failed) + " of " + std::to_string(t.total);
  if (t.failed > 0) out += "; off by more: " + t.failures;
  if (!versions_match) out += "; weight versions differ";
  return out + ")\n";
}

std::string kind_table(const std::vector<Validation>& all) {
  Table t;
  t.add_column("schedule", Table::Align::Left);
  t.add_column("op", Table::Align::Left);
  for (const char* c : {"ops", "predicted mean", "measured mean", "|error| median", "|error| p90", "bias"}) t.add_column(c);
  for (const Validation& v : all)
    for (const DurationError& e : v.report.per_kind)
      t.add_row({validation_label(v), std::string(op_kind_name(e.kind)), std::to_string(e.ops),
                 format_duration(e.predicted_mean), format_duration(e.measured_mean), format_percent(e.median),
                 format_percent(e.p90), format_signed_percent(e.signed_median)});
  return t.render();
}

std::string replay_table(const std::vector<Validation>& all) {
  Table t;
  t.add_column("schedule", Table::Align::Left);
  for (const char* c : {"replayed", "measured", "simulator's part", "cost model's part", "op times", "links, collectives",
                        "hand-offs seen", "median", "mean", "GradSync copies pred.", "meas."})
    t.add_column(c);
  for (const Validation& v : all) {
    const Replay& r = v.replay;
    t.add_row({validation_label(v), format_duration(r.time_per_iteration),
               format_duration(v.measured.time_per_iteration), format_signed_percent(r.simulator_part),
               format_signed_percent(r.cost_part), format_signed_percent(r.cost_ops_part),
               format_signed_percent(r.cost_comm_part), std::to_string(r.hand_offs),
               r.hand_offs > 0 ? format_duration(r.hand_off_median) : "-",
               r.hand_offs > 0 ? format_duration(r.hand_off_mean) : "-",
               r.sync_members > 0 ? format_duration(r.sync_work_predicted) : "-",
               r.sync_members > 0 ? format_duration(r.sync_work_measured) : "-"});
  }
  return t.render();
}

namespace {

// Whether the seen hand-offs' mean is well above their median (kStalledHandOffs times): some
// took far longer than a message does, the host holding a thread (2-10 ms on the 2-vCPU VM).
constexpr double kStalledHandOffs = 1.5;
bool stalled_hand_offs(const Replay& r) {
  return r.hand_offs > 0 && static_cast<double>(r.hand_off_mean) > kStalledHandOffs * static_cast<double>(r.hand_off_median);
}

// An op's slowdown after another device's on its core, by kind (CoreUse).
nlohmann::ordered_json turns_json(const KindFactors& turns) {
  return {{"F", turns[static_cast<std::size_t>(OpKind::F)]},
          {"B", turns[static_cast<std::size_t>(OpKind::B)]},
          {"OPT", turns[static_cast<std::size_t>(OpKind::OptStep)]}};
}

// A share, or a time, that was measured (not negative); null where it was not.
nlohmann::ordered_json measured_or_null(double value) {
  return value >= 0 ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json core_use_json(const CoreUse& use) {
  nlohmann::ordered_json j{{"cores", use.cores},
                           {"predicted", use.predicted},
                           {"measured", use.measured},
                           {"profile_turn_slowdown", turns_json(use.profile_turns)},
                           {"turn_slowdown", turns_json(use.turns)},
                           {"thread_cpu_grad_sync_copies", measured_or_null(use.copies)},
                           {"thread_cpu_outside_ops", measured_or_null(use.outside_ops)}};
  j["ops_cpu_s"] = use.ops_cpu_measured_s >= 0
                       ? nlohmann::ordered_json{{"predicted", use.ops_cpu_predicted_s},
                                                {"measured", use.ops_cpu_measured_s},
                                                {"threads_measured", use.threads_cpu_measured_s}}
                       : nlohmann::ordered_json(nullptr);
  return j;
}

}  // namespace

std::string replay_advice(const std::vector<Validation>& all, double tolerance) {
  std::string out;
  for (const Validation& v : all) {
    if (passes(v.report.time_per_iteration_error, tolerance)) continue;
    const Replay& r = v.replay;
    if (passes(r.simulator_part, tolerance))
      out += validation_label(v) + ": on the run's own times the simulator is within " +
             format_percent(std::abs(r.simulator_part)) + "; the miss is the cost model's (" +
             format_signed_percent(r.cost_part) + ": " + cost_parts(r) + "): the run's " +
             (std::abs(r.cost_ops_part) >= std::abs(r.cost_comm_part) ? "ops" : "messages and collectives") +
             " took other times than the profile's (a machine that moved, a profile taken under load: see the op table "
             "and the warnings)\n";
    else
      out +=
          validation_label(v) + ": even on the run's own times the simulator is off by " +
          format_signed_percent(r.simulator_part) +
          ": how the run went (waiting, shared cores, work outside the ops) is not what the simulator models" +
          (stalled_hand_offs(r) ? "; the hand-offs seen took " + format_duration(r.hand_off_mean) +
                                      " on average against a median of " + format_duration(r.hand_off_median) +
                                      ": the host stalled some, which the replay (each link at its median) leaves out"
                                : std::string()) +
          " (docs/validation/README.md)\n";
  }
  return out;
}

nlohmann::ordered_json validation_json(const Validation& v, const ValidationSettings& f) {
  const PredictionReport& r = v.report;
  nlohmann::ordered_json j;
  j["schedule"] = v.schedule.name;
  if (v.run > 0) j["run"] = v.run;
  j["backend"] = f.backend;
  j["model"] = f.model;
  j["micro_batch_size"] = f.micro_batch_size;
  j["cost_model"] = v.cost_label;
  j["footprint"] = {{"device_blocks", v.device_blocks}, {"profiled_within", v.profiled_blocks}};
  j["versions_match"] = r.versions_match();
  j["versions_compared"] = r.versions_compared;
  j["version_mismatch_count"] = r.version_mismatch_count;
  auto& mismatches = j["version_mismatches"] = nlohmann::ordered_json::array();
  for (const VersionMismatch& m : r.version_mismatches)
    mismatches.push_back({{"device", m.ref.device}, {"index", m.ref.index}, {"op", to_string(m.op)},
                          {"predicted", m.predicted}, {"measured", m.measured}});
  j["warmup_iterations"] = v.warmup;
  j["measured_iterations"] = v.counted;
  j["time_per_iteration_error"] = r.time_per_iteration_error;
  j["tolerance"] = f.tolerance;
  j["verdict"] = v.pass && r.versions_match() ? "PASS" : "FAIL";
  j["prediction_interval"] = interval_json(v.interval);
  j["inside_interval"] = v.inside;
  j["calibrated_interval"] = v.calibrated ? calibrated_json(*v.calibrated) : nullptr;
  j["speed_probes"] = {{"before", speeds_json(v.speeds_before)}, {"after", speeds_json(v.speeds_after)},
                      {"drift", speed_drift(v.speeds_before, v.speeds_after)},
                      {"applied", speeds_during_run(v.speeds_before, v.speeds_after)}};
  j["core_use"] = v.core_use ? core_use_json(*v.core_use) : nlohmann::ordered_json(nullptr);
  j["replay"] = {{"time_per_iteration_s", static_cast<double>(v.replay.time_per_iteration) * 1e-9},
                 {"simulator_part", v.replay.simulator_part},
                 {"cost_model_part", v.replay.cost_part},
                 {"cost_model_ops_part", v.replay.cost_ops_part},
                 {"cost_model_comm_part", v.replay.cost_comm_part},
                 {"hand_offs", v.replay.hand_offs},
                 {"hand_off_median_s", static_cast<double>(v.replay.hand_off_median) * 1e-9},
                 {"hand_off_mean_s", static_cast<double>(v.replay.hand_off_mean) * 1e-9},
                 {"grad_sync_copies", v.replay.sync_members > 0
                                          ? nlohmann::ordered_json{{"members", v.replay.sync_members},
                                                                   {"predicted_s", static_cast<double>(v.replay.sync_work_predicted) * 1e-9},
                                                                   {"measured_s", static_cast<double>(v.replay.sync_work_measured) * 1e-9}}
                                          : nlohmann::ordered_json(nullptr)}};
  j["makespan_error"] = r.makespan_error;
  j["bubble_ratio"] = {{"predicted", v.predicted.bubble_ratio}, {"measured", v.measured.bubble_ratio}};
  j["peak_activation_bytes"] = {{"predicted", max_peak_activation_bytes(v.predicted)}, {"measured", max_peak_activation_bytes(v.measured)}};
  auto& kinds = j["per_kind"] = nlohmann::ordered_json::array();
  for (const DurationError& e : r.per_kind)
    kinds.push_back({{"kind", op_kind_name(e.kind)},
                     {"ops", e.ops},
                     {"median_abs_error", e.median},
                     {"p90_abs_error", e.p90},
                     {"signed_median_error", e.signed_median},
                     {"predicted_median_s", static_cast<double>(e.predicted_median) * 1e-9},
                     {"measured_median_s", static_cast<double>(e.measured_median) * 1e-9},
                     {"predicted_mean_s", static_cast<double>(e.predicted_mean) * 1e-9},
                     {"measured_mean_s", static_cast<double>(e.measured_mean) * 1e-9}});
  j["unmatched_ops"] = r.unmatched_ops;
  j["predicted"] = metrics_json(v.predicted);
  j["measured"] = metrics_json(v.measured);
  j["measured"]["iteration_loss"] = v.measured_run.iteration_loss;
  if (auto launch = launch_json(v.measured_run); !launch.is_null()) j["launch"] = std::move(launch);  // cuda: graphs or direct
  j["warnings"] = v.measured_run.warnings;
  return j;
}

void write_trace(OutputFile& file, const Validation& v) {
  TraceOptions options;
  options.title = validation_label(v) + ": predicted and measured";
  options.metadata = {{"generator", "pipesim " PIPESIM_VERSION}, {"cost model", v.cost_label}};
  write_chrome_trace_groups(file.stream(),
                            {TraceGroup{"predicted", v.schedule, v.predicted_timeline},
                             TraceGroup{"measured", v.schedule, v.measured_run.timeline}},
                            options);
  file.close();
}

void write_report(OutputFile& file, const std::vector<Validation>& all, const ValidationSettings& f) {
  ReportOptions options;
  options.title = "pipesim validate: " + f.model + " on " + f.backend;
  options.settings = {{"model", f.model}, {"backend", f.backend}, {"micro-batch size", std::to_string(f.micro_batch_size)},
                      {"optimizer", f.optimizer}, {"cost model", f.cost_label}};
  options.generator = "pipesim " PIPESIM_VERSION;
  options.rank_runs = false;  // predicted and measured of one schedule: neither is "best"
  std::vector<NamedInterval> intervals;
  std::vector<std::string> calibrated;
  for (const Validation& v : all) {
    intervals.emplace_back(validation_label(v), v.interval);
    calibrated.push_back(v.calibrated ? calibrated_range_text(*v.calibrated) : std::string());
  }
  options.intro_html = interval_report_html(intervals, calibrated);
  // The timelines' names on the page ("1f1b (predicted)"); the validations keep theirs.
  std::vector<Metrics> named;
  named.reserve(2 * all.size());
  std::vector<ReportRun> runs;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Validation& v = all[i];
    const std::string label = validation_label(v);
    options.intro_html += validation_html(v.report, label + ": predicted against measured", "validation-" + std::to_string(i));
    options.intro_html += "<p class=\"note\">" + xml_escape(replay_line(v)) + "</p>\n";
    if (v.core_use) {  // more device threads than cores: the cores' time ops filled, each way
      const std::string warning = core_use_warning(label, *v.core_use, f.tolerance);
      options.intro_html += "<p class=\"" + std::string(warning.empty() ? "note" : "warn") + "\">" +
                            xml_escape(core_use_line(label, v.schedule.num_devices, *v.core_use)) +
                            (warning.empty() ? "" : "<br>" + xml_escape(warning)) + "</p>\n";
    }
    named.push_back(v.predicted);
    named.back().schedule = label + " (predicted)";
    runs.push_back(ReportRun{v.schedule, v.predicted_timeline, named.back()});
    named.push_back(v.measured);
    named.back().schedule = label + " (measured)";
    runs.push_back(ReportRun{v.schedule, v.measured_run.timeline, named.back()});
  }
  if (const std::vector<std::string> lines = runs_lines(all, f.tolerance); !lines.empty()) {  // --runs
    std::string html;
    for (const std::string& line : lines) html += (html.empty() ? "" : "<br>") + xml_escape(line);
    options.intro_html += "<p class=\"note\">" + html + "</p>\n";
  }
  write_html_report(file.stream(), runs, options);
  file.close();
}

}  // namespace pipesim
