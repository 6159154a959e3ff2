#pragma once
// The records a Chrome trace keeps, as its TraceLimit (tools/trace_limit.hpp) says: the one
// recorder behind simulate's and compare's recorded traces (large unbudgeted ones are
// streamed instead).
//
// --max-trace-ops N: the first N ops of the run, in order of completion, and everything
// that happened until the last of them ended; otherData and one stderr note say so.
//
// The default, a budget (--trace-budget, default 100 MB): whole iterations. What the trace
// keeps: the first iteration and the last, then the second, third, ... as
// long as the file stays within the budget. The budget counts the trace's JSON bytes, what
// a viewer has to load (a ".gz" file is several times smaller on disk). When the first
// iteration alone is larger than the budget, the trace keeps the first N ops of the run
// (in order of completion, and everything that happened until the last of them ended, as
// --max-trace-ops N would), N as large as fits. otherData and one stderr note say what was
// left out.
//
// Which iteration an op belongs to: F/B/I/W and communication ops by their micro-batch
// (Schedule::iteration_of); GradSync and OptStep by the nearest micro-batch op before them
// in their device's list (the iteration they close; the nearest after, if none is before).
// Memory counters show the device's real memory wherever the trace shows its ops: a
// device keeps every memory record from the first to the last op of each kept iteration in
// its list (also those of other iterations' ops in between, which asynchronous schedules
// have). Records hold the device's total, and a device's first op of an iteration is an F,
// whose record at its start sets the counter.
//
// How, in bounded memory: TraceRecorder keeps every record until kBudgetRecordOps ops
// have ended (at most what the budget could hold), then only the last iteration's. After
// the run, select() measures each complete iteration by writing it alone to a counting
// sink (the batch writer, traces/chrome_trace.hpp, so the sizes are exact), picks
// iterations in the order above, then measures the chosen trace as a whole (flow ids and
// lanes differ slightly) and drops iterations until it fits. The measuring writes at most
// about three times the budget's bytes to memory-less sinks.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "schedules/schedule.hpp"
#include "sim/observer.hpp"
#include "sim/timeline.hpp"
#include "tools/trace_limit.hpp"
#include "traces/chrome_trace.hpp"

namespace pipesim {

// A lower bound of a trace's bytes per op (compute slice, transfers, flows, counters; the
// smallest measured is ~300, 1F1B on one device): the budget cannot hold more ops than
// budget / this, so the recorder keeps no more than that.
inline constexpr std::uint64_t kMinTraceBytesPerOp = 200;
// Ops TraceRecorder keeps before it keeps only the last iteration: the most a budget of
// `budget_bytes` can hold, and at most 10^6 (the batch writer's ~600 bytes per op).
std::size_t budget_record_ops(std::uint64_t budget_bytes);

// "97.8 MB": a trace's size in decimal units, as --trace-budget takes them.
std::string format_trace_bytes(std::uint64_t bytes);

// The iteration of ops[ref.device][ref.index] (see above).
int op_iteration(const Schedule& s, OpRef ref);

// Bytes write_chrome_trace writes for this timeline (written to a sink that keeps none).
std::uint64_t chrome_trace_bytes(const Schedule& s, const Timeline& t, const TraceOptions& options);

// InputError where a trace of `schedule` under --trace-budget `budget` could not hold even its
// tracks (a process and its threads per device, before any op): checked before the run, and
// by select() once the static memory counters are known.
void check_tracks_fit(const Schedule& schedule, std::uint64_t budget, const TraceOptions& options);

class TraceRecorder final : public SimObserver {
 public:
  // `keep_all`: record the whole run (an HTML report needs it) and select from it. A
  // `limit` without a budget (--trace-budget 0) and without --max-trace-ops keeps all.
  TraceRecorder(const Schedule& schedule, const TraceLimit& limit, bool keep_all);

  void on_op(const OpRecord& r) override;
  void on_transfer(const TransferRecord& r) override;
  void on_collective(const CollectiveRecord& r) override;
  void on_memory(const MemoryRecord& r) override;

  struct Selection {
    Timeline trace;  // what the trace shows
    // otherData entries saying what was kept and left out (empty when all was kept).
    std::vector<std::pair<std::string, std::string>> metadata;
    std::string note;          // the stderr note (empty when all was kept)
    std::uint64_t bytes = 0;   // the trace's size with `options` and `metadata` (budgeted)
  };
  // After the run. `options` are the trace's (metadata and static memory included).
  Selection select(const TraceOptions& options) const;

  // What was recorded: the whole run with keep_all (or when it was small enough).
  Timeline timeline;

 private:
  struct Mark {  // the other vectors' sizes when an op record arrived
    std::uint32_t transfers = 0, collectives = 0, memory = 0;
  };
  struct Index;  // select()'s records by iteration
  int iterations() const { return static_cast<int>(expected_.size()); }
  // Everything is recorded until the op after the first record_ops_ arrives (not
  // budgeted: record_ops_ is first_ops_).
  bool recording_all() const { return keep_all_ || seen_ <= record_ops_; }
  Timeline iterations_timeline(const Index& index, const std::vector<int>& chosen) const;
  Timeline prefix_timeline(std::size_t ops) const;
  Selection select_prefix(const TraceOptions& options, const std::string& why) const;

  const Schedule& s_;
  const std::uint64_t budget_;     // 0: not budgeted
  const std::size_t first_ops_;    // not budgeted: the ops kept (the whole run by default)
  const bool keep_all_;
  const std::size_t record_ops_;
  std::size_t seen_ = 0;               // op records seen
  bool record_last_ = false;           // the last iteration is small enough to record
  std::vector<std::size_t> expected_;  // ops per iteration in the schedule
  std::vector<std::size_t> recorded_;  // op records kept per iteration
  // The iteration of each op, transfer and collective record in `timeline`.
  std::vector<std::int32_t> op_iteration_, transfer_iteration_, collective_iteration_;
  // Per memory record: the index in its device's list of the op that made it (F at its
  // start, B/I/W at their end: the device's next compute op to end); kUnknown until then.
  static constexpr std::int32_t kUnknown = std::numeric_limits<std::int32_t>::max();
  std::vector<std::int32_t> memory_position_;
  std::vector<Mark> marks_;  // per op record of the run's first record_ops_ + 1
  std::vector<std::int32_t> last_start_;  // per device: index of its first op of the last iteration
  // Per device: memory records waiting for their op, as indices into timeline.memory while
  // everything is recorded, as copies after.
  std::vector<std::vector<std::size_t>> pending_index_;
  std::vector<std::vector<MemoryRecord>> pending_;
};

}  // namespace pipesim
