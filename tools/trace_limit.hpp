#pragma once
// --max-trace-ops: a Chrome trace takes ~1 KB of file and ~600 bytes of memory per op, so
// a 10^8-op run would write about 100 GB. TraceRecorder keeps the trace to the first N ops
// (in order of completion) and everything that happened until the last of them ended; the
// trace says so in otherData and the CLI on stderr. (A streaming writer would not need the
// records, but the trace sorts its events per thread and assigns lanes over the whole run,
// so it needs all of them at once: see docs/reliability.md.)
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "schedules/schedule.hpp"
#include "sim/timeline.hpp"

namespace pipesim {

inline constexpr std::size_t kDefaultMaxTraceOps = 1'000'000;  // ~1 GB of trace file

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
