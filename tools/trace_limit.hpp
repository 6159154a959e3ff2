#pragma once
// What the Chrome trace of `pipesim simulate --trace` and `pipesim compare --trace-dir`
// keeps, and the run that writes it.
//
// A trace takes ~0.3-1.2 kB of JSON per op (docs/traces.md), and Perfetto's UI, which
// runs in the browser, opens a few hundred MB at most (the browser gives it ~2 GB, in which
// the parsed trace is several times its file size: perfetto.dev/docs/visualization/
// large-traces; a 900 MB JSON trace crashed it, github.com/google/perfetto/issues/99). So:
//
//   default              whole iterations, the first and the last, more if they fit, under
//                        --trace-budget (default 100MB): tools/trace_recorder.hpp
//   --trace-budget 0     the whole run
//   --max-trace-ops N    the first N ops (in order of completion) and everything that
//                        happened until the last of them ended, whatever the budget; 0: the
//                        whole run. Kept from before the budget, for a fixed cut.
// Asking for everything (--trace-budget 0, or --max-trace-ops) prints a warning before the
// run when the trace's estimated size is above the budget (with --trace-budget 0, the
// default's 100 MB). otherData ("truncated", "iterations") and one stderr note say what was
// left out. A name ending in ".gz" is written gzip-compressed (core/output_file.hpp); the
// budget counts the JSON bytes, which the viewer has to hold, not the compressed ones.
//
// One writer (traces/chrome_trace_writer.hpp), two drivers, the same bytes for the same
// records:
//   budgeted, or ops traced <= kStreamTraceOps   TraceRecorder (tools/trace_recorder.hpp)
//                                   keeps the records and selects what this limit says,
//                                   then write_chrome_trace (traces/chrome_trace.hpp)
//                                   replays them.
//   ops traced > kStreamTraceOps    ChromeTraceStream (traces/chrome_trace_stream.hpp)
//                                   writes each record as the engine reports it, in O(devices
//                                   + transfers in flight) memory. With static memory
//                                   counters the run is simulated once without records
//                                   first, for the static bytes.
// So `--trace-budget 0` on a 10^7-op run writes the whole trace without holding it
// (docs/traces.md).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/output_file.hpp"
#include "schedules/schedule.hpp"
#include "sim/engine.hpp"
#include "sim/timeline.hpp"
#include "tools/progress.hpp"
#include "traces/chrome_trace.hpp"

namespace pipesim {

inline constexpr std::uint64_t kDefaultTraceBudget = 100'000'000;  // --trace-budget 100MB
inline constexpr std::uint64_t kMinTraceBudget = 1'000'000;        // a trace's header alone is ~1 kB per device
inline constexpr std::size_t kStreamTraceOps = 1'000'000;          // more traced ops: streamed
// Typical trace bytes per op, for the warning's estimate (1F1B with transfers: ~1030).
inline constexpr std::uint64_t kTraceFileBytesPerOp = 1000;

struct TraceLimit {
  std::uint64_t budget = kDefaultTraceBudget;  // --trace-budget; 0: no limit
  std::optional<std::size_t> max_ops;          // --max-trace-ops, when given (0: all)
  bool budgeted() const { return !max_ops && budget > 0; }
};

// --trace-budget's value: "0" (no limit) or a size such as 100MB, 1.5GB, 512MiB of at least
// 1 MB. InputError otherwise.
std::uint64_t parse_trace_budget(const std::string& text);

// Ops a trace of a `total_ops` run shows when it is not budgeted: all, or --max-trace-ops.
std::size_t traced_ops(std::size_t total_ops, const TraceLimit& limit);
// Whether that trace is streamed (ChromeTraceStream) rather than recorded and replayed.
inline bool stream_trace(std::size_t total_ops, const TraceLimit& limit) {
  return !limit.budgeted() && traced_ops(total_ops, limit) > kStreamTraceOps;
}
// The most ops whose records a trace keeps in memory (for the memory estimate,
// tools/memory_guard.hpp): past kStreamTraceOps the trace is streamed, keeping none; a
// budgeted one keeps the run's first ops and the last iteration (tools/trace_recorder.hpp).
std::size_t recorded_trace_ops(const TraceLimit& limit);

// The warning for a trace of `path` asked to hold more than the budget, or "": "trace
// 't.json' will hold all 8388864 ops, ~8.39 GB of JSON, above the 100.0 MB trace budget:
// ...".
std::string trace_size_warning(const TraceLimit& limit, std::size_t total_ops, const std::string& path);

// "truncated to the first 1000000 of 134217728 ops (until 12.345 s); pass --max-trace-ops
// to change the limit"; without `until` (a streamed trace's header, written before the
// run) the "(until ...)" part is left out. `why` replaces the part after the ";".
std::string truncation_notice(std::size_t kept_ops, std::size_t total_ops, const Tick* until,
                              const std::string& why = "pass --max-trace-ops to change the limit");

// Bytes each device holds all the time, for the trace's memory counters (empty: unknown).
using StaticMemoryFn = std::function<std::vector<std::int64_t>(const Schedule&, const SimResult&)>;

// Simulates `schedule` and writes its trace to `file` (closed at the end, committed by the
// caller) as `limit` says, with the writer above, the warning and the note on stderr, and
// progress as `progress` says. `timeline`, when given, receives the whole run's records;
// `also`, when given, sees every record too (the time breakdown's recorder).
SimResult simulate_with_trace(const Schedule& schedule, const CostModel& model, TraceOptions options,
                              OutputFile& file, const TraceLimit& limit, const ProgressOptions& progress,
                              Timeline* timeline = nullptr, const StaticMemoryFn& static_memory = {},
                              SimObserver* also = nullptr, const SharedHardware* hardware = nullptr);

}  // namespace pipesim
