#include "tools/trace_limit.hpp"

#include <algorithm>
#include <iostream>

#include "core/error.hpp"
#include "core/units.hpp"
#include "tools/trace_recorder.hpp"
#include "traces/chrome_trace_stream.hpp"

namespace pipesim {
namespace {

// Trace writing shows a bar on a terminal from this many records (~2 s of writing).
constexpr std::uint64_t kTraceProgressRecords = 1'000'000;

void note(const OutputFile& file, const std::string& text) {
  std::cerr << "pipesim: note: trace " << one_line(file.path()) << " " << text << "\n";
}

// The batch driver, with a bar while it writes.
void write_recorded(OutputFile& file, const Schedule& schedule, const Timeline& t, TraceOptions options,
                    const ProgressOptions& progress) {
  std::optional<Progress> bar;
  options.progress = [&](std::size_t done, std::size_t total) {
    if (!bar) bar.emplace(progress, "writing trace " + file.path(), total, "records", kTraceProgressRecords);
    bar->update(done);
  };
  write_chrome_trace(file.stream(), schedule, t, options);
  if (bar) bar->finish();
  file.close();
}

// A trace too large to hold: written while the engine runs, into the trace's temporary
// file (a run that fails leaves the old file as it was).
SimResult run_streamed(const Schedule& schedule, const CostModel& model, TraceOptions options, OutputFile& file,
                       std::size_t max_ops, const ProgressOptions& progress, Timeline* timeline,
                       const StaticMemoryFn& static_memory, SimObserver* also, const SharedHardware* hardware) {
  const std::size_t total = schedule.total_ops();
  if (max_ops > 0 && total > max_ops)
    options.metadata.emplace_back("truncated", truncation_notice(max_ops, total, nullptr));
  // The static memory depends on the run (its peak weight versions), and the counters need
  // it from their first event: a run without records first, at the engine's speed (a few
  // percent of the time the trace's JSON takes to write), so both drivers write the same.
  if (static_memory) options.static_memory_bytes = static_memory(schedule, simulate(schedule, model, nullptr, nullptr, hardware));
  ChromeTraceStream stream(file.stream(), schedule, options, max_ops);
  TimelineRecorder recorder;
  ObserverList observers;
  observers.add(&stream);
  if (timeline) observers.add(&recorder);
  observers.add(also);
  const SimResult result = simulate_with_progress(schedule, model, observers.get(), progress,
                                                  "simulating " + schedule.name + " and writing its trace", hardware);
  stream.finish();
  file.close();
  if (stream.truncated()) {
    const Tick until = stream.cut_time();
    note(file, truncation_notice(stream.ops_kept(), total, &until));
  }
  if (timeline) *timeline = std::move(recorder.timeline);
  return result;
}

}  // namespace

std::uint64_t parse_trace_budget(const std::string& text) {
  if (text == "0") return 0;
  const auto bytes = static_cast<std::uint64_t>(parse_bytes(text, "--trace-budget"));
  if (bytes == 0) return 0;
  if (bytes < kMinTraceBudget)
    throw InputError("--trace-budget: at least 1MB (or 0 for no limit), got " + quote(text));
  return bytes;
}

std::size_t traced_ops(std::size_t total_ops, const TraceLimit& limit) {
  const std::size_t max = limit.max_ops.value_or(0);
  return max == 0 ? total_ops : std::min(total_ops, max);
}

std::size_t recorded_trace_ops(const TraceLimit& limit) {
  if (limit.budgeted()) return 2 * budget_record_ops(limit.budget);
  const std::size_t max = limit.max_ops.value_or(0);
  return max == 0 || max > kStreamTraceOps ? kStreamTraceOps : max;
}

std::string trace_size_warning(const TraceLimit& limit, std::size_t total_ops, const std::string& path) {
  if (limit.budgeted()) return {};
  const std::uint64_t budget = limit.budget > 0 ? limit.budget : kDefaultTraceBudget;
  const std::size_t ops = traced_ops(total_ops, limit);
  const double estimate = static_cast<double>(ops) * static_cast<double>(kTraceFileBytesPerOp);
  if (estimate <= static_cast<double>(budget)) return {};
  const std::string what = ops == total_ops ? "all " + std::to_string(ops) + " ops"
                                            : "the first " + std::to_string(ops) + " of " + std::to_string(total_ops) + " ops";
  return "trace " + quote(path, 256) + " will hold " + what + ", ~" +
         format_trace_bytes(static_cast<std::uint64_t>(estimate)) + " of JSON, above the " +
         format_trace_bytes(budget) + " trace budget: Perfetto's UI may not open it (trace_processor --httpd can); "
         "without " + (limit.max_ops ? "--max-trace-ops" : "--trace-budget 0") +
         ", the trace keeps whole iterations within --trace-budget";
}

std::string truncation_notice(std::size_t kept_ops, std::size_t total_ops, const Tick* until, const std::string& why) {
  std::string text = "truncated to the first " + std::to_string(kept_ops) + " of " + std::to_string(total_ops) + " ops";
  if (until) text += " (until " + format_duration(*until) + ")";
  return text + "; " + why;
}

SimResult simulate_with_trace(const Schedule& schedule, const CostModel& model, TraceOptions options,
                              OutputFile& file, const TraceLimit& limit, const ProgressOptions& progress,
                              Timeline* timeline, const StaticMemoryFn& static_memory, SimObserver* also,
                              const SharedHardware* hardware) {
  const std::size_t total = schedule.total_ops();
  if (const std::string warning = trace_size_warning(limit, total, file.path()); !warning.empty())
    std::cerr << "pipesim: warning: " << one_line(warning) << "\n";
  if (stream_trace(total, limit))
    return run_streamed(schedule, model, options, file, limit.max_ops.value_or(0), progress, timeline, static_memory,
                        also, hardware);
  if (limit.budgeted()) check_tracks_fit(schedule, limit.budget, options);
  TraceRecorder recorder(schedule, limit, timeline != nullptr);
  ObserverList observers;
  observers.add(&recorder);
  observers.add(also);
  const SimResult result =
      simulate_with_progress(schedule, model, observers.get(), progress, "simulating " + schedule.name, hardware);
  if (static_memory) options.static_memory_bytes = static_memory(schedule, result);
  const TraceRecorder::Selection shown = recorder.select(options);
  if (!shown.note.empty()) note(file, shown.note);
  options.metadata.insert(options.metadata.end(), shown.metadata.begin(), shown.metadata.end());
  write_recorded(file, schedule, shown.trace, options, progress);
  if (timeline) *timeline = std::move(recorder.timeline);
  return result;
}

}  // namespace pipesim
