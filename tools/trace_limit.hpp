#pragma once
// --max-trace-ops and the choice of trace writer for `pipesim simulate --trace` and
// `pipesim compare --trace-dir`.
//
// A Chrome trace takes ~1 KB of file per op, so a 10^8-op run would write about 100 GB:
// --max-trace-ops N (default 1,000,000; 0 = no limit) keeps the trace to the first N ops
// (in order of completion) and everything that happened until the last of them ended; the
// trace says so in otherData and the CLI on stderr.
//
// Two writers draw the same trace:
//   ops traced <= kStreamTraceOps   TraceRecorder keeps the records (~600 bytes per op with
//                                   the batch writer's events), then write_chrome_trace
//                                   (traces/chrome_trace.hpp) sorts them per thread.
//   ops traced >  kStreamTraceOps   ChromeTraceStream (traces/chrome_trace_stream.hpp)
//                                   writes each record as the engine reports it, in O(devices
//                                   + transfers in flight) memory: events in emission order,
//                                   lanes assigned online, the static memory as its own
//                                   counter. Same slices, flows and counters.
// So the default run keeps its sorted, compact trace, and `--max-trace-ops 0` on a 10^7-op
// run writes the whole trace without holding it (docs/performance.md, "Chrome traces").
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "schedules/schedule.hpp"
#include "sim/timeline.hpp"

namespace pipesim {

inline constexpr std::size_t kDefaultMaxTraceOps = 1'000'000;  // ~1 GB of trace file
inline constexpr std::size_t kStreamTraceOps = 1'000'000;      // more traced ops: streamed

// Ops a trace of a `total_ops` run shows under --max-trace-ops `max_trace_ops` (0: all).
std::size_t traced_ops(std::size_t total_ops, std::size_t max_trace_ops);
// Whether that trace is streamed (ChromeTraceStream) rather than recorded and sorted.
inline bool stream_trace(std::size_t total_ops, std::size_t max_trace_ops) {
  return traced_ops(total_ops, max_trace_ops) > kStreamTraceOps;
}
// The most ops whose records a trace keeps in memory (for the memory estimate,
// tools/memory_guard.hpp): past kStreamTraceOps the trace is streamed, keeping none.
inline std::size_t recorded_trace_ops(std::size_t max_trace_ops) {
  return max_trace_ops == 0 || max_trace_ops > kStreamTraceOps ? kStreamTraceOps : max_trace_ops;
}

// "truncated to the first 1000000 of 134217728 ops (until 12.345 s); pass --max-trace-ops
// to change the limit"; without `until` (a streamed trace's header, written before the
// run) the "(until ...)" part is left out.
std::string truncation_notice(std::size_t kept_ops, std::size_t total_ops, const Tick* until);

class TraceRecorder final : public SimObserver {
 public:
  // `max_trace_ops` 0: no limit. `keep_all`: record the whole run anyway (an HTML report
  // needs it); otherwise nothing is recorded after the limit.
  TraceRecorder(std::size_t max_trace_ops, bool keep_all) : max_ops_(max_trace_ops), keep_all_(keep_all) {}

  void on_op(const OpRecord& r) override;
  void on_transfer(const TransferRecord& r) override;
  void on_collective(const CollectiveRecord& r) override;
  void on_memory(const MemoryRecord& r) override;

  bool truncated() const { return cut_.has_value(); }
  // What the trace shows: the whole timeline, or its part up to the limit (a copy only when
  // keep_all recorded past the limit).
  const Timeline& trace_timeline();
  // The whole run; only complete if keep_all (or nothing was cut).
  Timeline timeline;

  // The notice for otherData and stderr, e.g. "truncated to the first 1000000 of 134217728
  // ops (until 12.345 s); pass --max-trace-ops to change the limit"; empty if not truncated.
  std::string notice(const Schedule& schedule) const;

 private:
  struct Cut {
    std::size_t ops, transfers, collectives, memory;
    Tick time;
  };
  bool recording() const { return !cut_ || keep_all_; }
  std::size_t max_ops_;
  bool keep_all_;
  std::optional<Cut> cut_;
  Timeline prefix_;  // trace_timeline() when keep_all and cut
};

}  // namespace pipesim
