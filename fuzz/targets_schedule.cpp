// Fuzz targets for schedule files: read, write back, validate, simulate, draw.
#include <sstream>

#include <nlohmann/json.hpp>

#include "cost_models/uniform.hpp"
#include "fuzz/check.hpp"
#include "schedules/schedule_io.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"
#include "sim/timeline.hpp"
#include "traces/ascii_timeline.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/html_report.hpp"

namespace pipesim::fuzz {
namespace {

// Every cost the engine knows is non-zero, so links, memory and collectives all run.
UniformCostConfig fuzz_costs() {
  UniformCostConfig c;
  c.stage = {3 * kNsPerUs, 5 * kNsPerUs, 2 * kNsPerUs};
  c.overrides[1] = {4 * kNsPerUs, 7 * kNsPerUs, 3 * kNsPerUs};
  c.optimizer = kNsPerUs;
  c.activation_bytes = 1 << 20;
  c.message_bytes = 1 << 16;
  c.grad_bytes = 1 << 22;
  c.link_latency = 500;
  c.link_bandwidth = 1e10;
  return c;
}

// What a successful read promises (schedule_io.hpp): a consistent shape.
void check_shape(const Schedule& s) {
  require(s.num_devices > 0 && static_cast<std::size_t>(s.num_devices) == s.ops.size(), "devices vs op lists");
  require(s.num_pipelines > 0 && static_cast<std::size_t>(s.num_pipelines) == s.placement.size(), "placement rows");
  require(s.num_stages > 0 && s.microbatches > 0 && s.iterations > 0 && s.microbatch_split > 0, "counts");
  for (const auto& row : s.placement) {
    require(static_cast<std::size_t>(s.num_stages) == row.size(), "placement columns");
    for (int d : row) require(d >= 0 && d < s.num_devices, "placement device");
  }
  require(s.total_ops() > 0, "no ops");
}

void check_metrics(const Metrics& m, Tick critical_path) {
  require(m.makespan >= 0 && m.busy >= 0 && m.idle >= 0, "negative makespan, busy or idle");
  require(m.makespan >= critical_path, "makespan " + std::to_string(m.makespan) + " below the critical path " +
                                           std::to_string(critical_path));
  require(m.time_per_iteration >= 0, "negative time per iteration " + std::to_string(m.time_per_iteration));
  require_finite_non_negative(m.bubble_ratio, "bubble ratio");
  require(m.bubble_ratio <= 1, "bubble ratio above 1");
  require_finite_non_negative(m.bubble_ratio_megatron, "Megatron bubble ratio");
  require_finite_non_negative(m.throughput_mb_per_s, "throughput");
  require_finite_non_negative(m.staleness.mean_mismatch, "mean mismatch");
  require_finite_non_negative(m.staleness.mismatched_fraction, "mismatched fraction");
  require_finite_non_negative(m.staleness.mean_delay, "mean delay");
  for (const DeviceMetrics& d : m.per_device)
    require(d.busy >= 0 && d.idle >= 0 && d.peak_activations >= 0 && d.peak_activation_bytes >= 0,
            "device " + std::to_string(d.device) + ": negative busy, idle or peak");
}

}  // namespace

bool check_runs(const Schedule& s, const UniformCostModel& model) {
  ValidationReport report;
  try {
    const OpScale scale = scale_of(s);
    report = validate(s, [&](const Op& op) -> std::int64_t {
      return op.kind == OpKind::GradSync ? 0 : model.compute_time(op, scale);
    });
  } catch (const InputError& e) {
    // The only InputError validate may throw for a consistent shape: 64-bit time overflow.
    require(std::string(e.what()).find("overflows") != std::string::npos,
            std::string("validate threw on a schedule the reader accepted: ") + e.what());
    require_one_line(e.what(), "validate");
    return true;
  } catch (const std::exception& e) {
    violation(std::string("validate threw on a schedule the reader accepted: ") + e.what());
  }
  for (const std::string& error : report.errors) require_one_line(error, "validation error");
  if (!report.ok()) return false;
  if (s.total_ops() > kMaxSimulatedOps) return true;
  require(report.critical_path >= 0, "negative critical path");

  TimelineRecorder recorder;
  SimResult result;
  // The engine checks what the validator cannot see (time and memory overflows, a 2bw batch
  // before its weights exist): an InputError there is fine, anything else is not.
  if (!parses([&] { result = simulate(s, model, &recorder); }, "simulate")) return true;
  const Metrics metrics = summarize(s, result);
  check_metrics(metrics, report.critical_path);

  std::ostringstream trace;
  write_chrome_trace(trace, s, recorder.timeline);
  const auto parsed = nlohmann::json::parse(trace.str(), nullptr, false);
  require(!parsed.is_discarded(), "the Chrome trace is not valid JSON");
  std::ostringstream html;
  write_html_report(html, {ReportRun{s, recorder.timeline, metrics}});
  (void)render_ascii_order(s);
  (void)render_ascii_timeline(s, recorder.timeline);
  return true;
}

namespace {

// Writing a schedule and reading it back gives the same file (docs/schedule-format.md).
void check_round_trip(const Schedule& s) {
  const std::string json = schedule_to_json(s);
  Schedule back;
  try {
    back = parse_schedule_json(json, "round-trip.json");
  } catch (const std::exception& e) {
    violation(std::string("schedule_to_json output does not read back: ") + e.what() + "\n" + json);
  }
  require(schedule_to_json(back) == json, "JSON round trip changed the schedule:\n" + json);
  Schedule from_csv;
  try {
    from_csv = parse_schedule_csv(schedule_to_csv(s), "round-trip.csv");
  } catch (const InputError&) {
    return;  // CSV cannot carry everything (stages without ops, placement): not a promise
  }
  // Nor devices without ops after the last one with ops: trailing blank lines end the file,
  // but a row of blank cells ("," : a device idle for two steps) is kept; so compare without
  // trailing devices that have no ops on either side.
  const auto trimmed = [](std::vector<std::vector<Op>> ops) {
    while (!ops.empty() && ops.back().empty()) ops.pop_back();
    return ops;
  };
  require(trimmed(from_csv.ops) == trimmed(s.ops), "CSV round trip changed the ops");
}

void check_schedule(const Schedule& s) {
  check_shape(s);
  check_round_trip(s);
  (void)check_runs(s, UniformCostModel(fuzz_costs()));
}

}  // namespace

void schedule_csv(std::string_view bytes) {
  Schedule s;
  if (parses([&] { s = parse_schedule_csv(bytes, "fuzz.csv"); }, "parse_schedule_csv")) check_schedule(s);
}

void schedule_json(std::string_view bytes) {
  Schedule s;
  if (parses([&] { s = parse_schedule_json(bytes, "fuzz.json"); }, "parse_schedule_json")) check_schedule(s);
}

}  // namespace pipesim::fuzz
