#pragma once
// ChromeTraceStream: the Chrome trace of a run written while the engine runs, event by
// event, so a 10^8-op trace never has to fit in memory. Same format, layout, fields and
// header as the batch writer (traces/chrome_trace.hpp, traces/chrome_trace_events.hpp);
// what differs:
//
//   order   Events appear in the order the engine reports records (the end of each op or
//           transfer), not sorted per thread. The Trace Event Format allows that ("The
//           events do not have to be in timestamp-sorted order", Trace Event Format
//           document, docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU),
//           and the viewers sort on load: Perfetto's trace processor puts events into
//           timestamp order before parsing them (src/trace_processor/trace_sorter.h: it
//           "takes care of sorting events parsed from the trace stream in arbitrary
//           order"; ties keep file order). Emission order is deterministic, so identical
//           input still gives byte-identical files.
//   lanes   Assigned online: a slice takes the first lane of its (device, base thread)
//           that is free at its start, i.e. whose slices all ended before it, or exactly at
//           its start after a slice of positive length (a zero-length slice is never
//           followed on its lane by one starting at the same time: Perfetto would nest
//           them and bind the first one's flows to the second). Correct, but slices that
//           arrive out of start order can open more lanes than the batch writer's. A
//           lane's thread_name / thread_sort_index metadata is written when it is first
//           used; lane 0 of every base thread is named in the metadata up front.
//   flows   Same arrows (producer op -> send slice -> consumer op), ids derived from the
//           transfer's arrival index (2i+1 and 2i+2). The producer op is written before its
//           transfer arrives: it leaves its flow point in a small map when the dependency
//           rules (schedules/dependencies.hpp) say it feeds an op on another device (F ->
//           F of the next stage, B/I -> B/I of the previous one), and the transfer takes it
//           from there. The transfer leaves the send slice's point for its consumer, which
//           draws the arrow when it ends. Both events of a flow are written together, so a
//           truncated trace has no dangling arrow.
//   end     Anything known only after the run stays out of the file except what finish()
//           is given: the static memory per device (the analytical model knows it only
//           from the run's peak weight versions) becomes a "static memory" counter at t=0
//           instead of the batch writer's stacked "device memory" counter. A truncation
//           notice goes in the header, written first (the caller knows the op count).
//
// Retained state: O(devices x lanes) for lanes and counters, plus one entry per producer
// whose transfer is still in flight and one per transfer whose consumer has not ended.
// (A schedule in which an op lacks the consumer the rules predict, e.g. a backward chain
// that stops short of stage 0, keeps one entry per such op until the end.)
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <unordered_map>
#include <vector>

#include "schedules/schedule.hpp"
#include "sim/observer.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/chrome_trace_events.hpp"
#include "traces/json_writer.hpp"

namespace pipesim {

class ChromeTraceStream final : public SimObserver {
 public:
  // Writes the header and every device's process and base-thread metadata at once.
  // `max_ops` > 0: the trace keeps the first max_ops op records (in order of completion)
  // and everything reported before the next one, like tools/trace_limit.hpp's recorder.
  // `schedule` must outlive the writer (options are copied).
  ChromeTraceStream(std::ostream& out, const Schedule& schedule, const TraceOptions& options = {},
                    std::size_t max_ops = 0);

  void on_op(const OpRecord& r) override;
  void on_transfer(const TransferRecord& r) override;
  void on_collective(const CollectiveRecord& r) override;
  void on_memory(const MemoryRecord& r) override;

  // Closes the trace after the run: a 0 counter for devices without memory records, the
  // "static memory" counters if `static_memory_bytes` is given (one per device) and
  // options.static_memory_bytes was not, and the closing brackets. Call exactly once.
  void finish(const std::vector<std::int64_t>& static_memory_bytes = {});

  bool truncated() const { return cut_; }
  Tick cut_time() const { return cut_time_; }        // end of the last op kept, if truncated
  std::size_t ops_kept() const { return ops_kept_; }  // op records written or skipped (GradSync)

  // What the writer holds right now, and at most during the run (entries, not bytes).
  struct Retained {
    std::size_t producers = 0;  // producer flow points waiting for their transfer
    std::size_t consumers = 0;  // send-slice flow points waiting for their consumer
    std::size_t lanes = 0;      // lanes over all (device, base thread)
  };
  Retained retained() const;
  std::size_t peak_pending() const { return peak_pending_; }  // max of producers + consumers
  // Transfers whose producer was not in the map (the rules predicted no transfer): their
  // producer -> send arrow is missing. 0 for every schedule the rules describe.
  std::size_t unmatched_producers() const { return unmatched_; }

 private:
  struct Point {  // where a flow event goes: inside a written slice
    std::int32_t pid = 0;
    std::int32_t tid = 0;
    Tick ts = 0;
  };
  struct Producer {
    Point point;
    std::int32_t remaining = 0;  // transfers still expected
  };
  struct Incoming {
    std::uint64_t id = 0;
    Point from;  // the send slice
  };
  struct Lane {
    Tick end = std::numeric_limits<Tick>::min();  // end of its latest slice
    bool positive = true;  // that slice had positive length (or there is none)
  };

  static std::uint64_t key(const OpRef& ref) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(ref.device)) << 32) |
           static_cast<std::uint32_t>(ref.index);
  }
  const Op& op_at(const OpRef& ref) const;
  int cross_device_consumers(const Op& op, int device) const;
  // Picks the lane for a slice on (device, base) and returns its tid (writing the lane's
  // metadata the first time).
  int place(int device, int base, Tick start, Tick end);
  void flow(const Point& from, const Point& to, std::uint64_t id);
  void note_pending();

  const Schedule& s_;
  const TraceOptions opt_;
  JsonWriter w_;
  chrome::EventList list_;
  int num_devices_ = 0;
  std::size_t max_ops_ = 0;
  std::size_t ops_kept_ = 0;
  bool cut_ = false;
  Tick cut_time_ = 0;
  Tick last_op_end_ = 0;
  bool finished_ = false;
  std::uint64_t transfers_ = 0;
  std::vector<std::vector<Lane>> lanes_;  // [device * 4 + base]
  std::vector<std::uint8_t> memory_seen_;  // per device
  std::unordered_map<std::uint64_t, Producer> producers_;
  std::unordered_map<std::uint64_t, std::vector<Incoming>> consumers_;
  std::size_t peak_pending_ = 0;
  std::size_t unmatched_ = 0;
};

}  // namespace pipesim
