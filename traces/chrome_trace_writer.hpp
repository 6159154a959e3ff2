#pragma once
// chrome::TraceWriter: pipesim's one Chrome trace writer. It takes a run's records in the
// order the engine reports them (the end of each op, collective or transfer, each memory
// change: nondecreasing in time) and writes their events (traces/chrome_trace_events.hpp)
// as it goes. Two drivers feed it:
//   batch      write_chrome_trace (traces/chrome_trace.hpp): a whole Timeline, its records
//              merged into that order (by time, each kind in its vector's order)
//   streaming  ChromeTraceStream (traces/chrome_trace_stream.hpp): records as the engine
//              reports them, in O(devices + transfers in flight) memory
// and both give the same bytes for the same run.
//
//   order   Events follow the records. Records that share an instant are taken kind by
//           kind, ops, then transfers, then collectives, then memory changes, each kind in
//           the order it was reported; so the order of the engine's reports within an
//           instant, which a Timeline does not keep, changes nothing. The Trace Event Format
//           allows any order ("The events do not have to be in timestamp-sorted order",
//           docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU), and
//           the viewers sort on load (Perfetto's trace processor: src/trace_processor/
//           trace_sorter.h; ties keep file order).
//   lanes   A slice takes the first lane of its (device, base thread) that is free at its
//           start: whose slices all ended before it or exactly at its start, except that a
//           zero-length slice that will still get a flow event (a producer op's, or a send
//           slice's whose consumer has not ended) is never followed on its lane by one
//           starting at the same time: Perfetto binds a flow event to the innermost slice
//           open on the track, which would be the later one. A lane's thread_name /
//           thread_sort_index metadata is written when it is first used; lane 0 of every
//           base thread up front.
//   flows   Per transfer, producer op -> send slice -> consumer op, ids 2i+1 and 2i+2 for
//           the i-th transfer (plus the group's base). The producer op is written before its
//           transfer arrives: it leaves its flow point in a small map when the dependency
//           rules (cross_device_outputs, schedules/dependencies.hpp) say it sends messages,
//           and the transfer takes it from there. The transfer leaves the send slice's
//           point for its consumer, which draws the arrow when it ends (or at once, when
//           the consumer ended in the same instant). Both events of a flow are written
//           together, so a truncated trace has no dangling arrow.
//   memory  Per device a counter "activation memory" {bytes}, or "device memory" {static,
//           activations} when TraceOptions gives the static bytes, anchored by a 0 at t=0.
// `max_ops` > 0 keeps the first max_ops op records (in the order above) and what comes
// before the next one (tools/trace_limit.hpp).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "schedules/op_numbering.hpp"
#include "schedules/schedule.hpp"
#include "sim/records.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/chrome_trace_events.hpp"

namespace pipesim::chrome {

// One run's place in a file of several (write_chrome_trace_groups): its processes are
// pid_base + device, named "<prefix>device N", its flow ids start after flow_id_base.
struct TraceGroupPlace {
  int pid_base = 0;
  std::string prefix;
  std::uint64_t flow_id_base = 0;
};

class TraceWriter {
 public:
  // Writes every device's process and base-thread metadata at once. `schedule` and `out`
  // must outlive the writer (options are copied). InputError if the schedule's shape is
  // inconsistent (check_schedule_shape, as the engine would say).
  TraceWriter(EventList& out, const Schedule& schedule, const TraceOptions& options, TraceGroupPlace place = {},
              std::size_t max_ops = 0);

  // Records in report order (see above); a record earlier than the one before is a broken
  // invariant (PIPESIM_ASSERT).
  void add(const OpRecord& r);
  void add(const TransferRecord& r);
  void add(const CollectiveRecord& r);
  void add(const MemoryRecord& r);
  // After the last record: its instant, and a 0 counter for devices without memory
  // records. Call exactly once.
  void finish();

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
  // Transfers from a compute op that was not in the map (the rules predicted no message,
  // or the op is not in the records): their producer -> send arrow is missing.
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
    bool pinned = false;  // that slice lasts 0 ns and will still get a flow event
  };

  static std::uint64_t key(const OpRef& ref) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(ref.device)) << 32) |
           static_cast<std::uint32_t>(ref.index);
  }
  const Op& op_at(const OpRef& ref) const;
  void at(Tick time);  // a record of this instant: the earlier instant is written first
  template <class Record>
  void hold(std::vector<Record>& instant, const Record& r, Tick time) {
    at(time);
    instant.push_back(r);
  }
  void flush();        // writes the instant's records, kind by kind
  void write(const OpRecord& r);
  void write(const TransferRecord& r);
  void write(const CollectiveRecord& r);
  void write(const MemoryRecord& r);
  // Picks the lane for a slice on (device, base) and returns its tid (writing the lane's
  // metadata the first time); `flows_later`: a flow event will be written into it later.
  int place(int device, int base, Tick start, Tick end, bool flows_later);
  void flow(const Point& from, const Point& to, std::uint64_t id);
  void note_pending();

  EventList& out_;
  const Schedule& s_;
  const TraceOptions opt_;
  const TraceGroupPlace place_;
  const std::vector<std::uint8_t> outputs_;  // per device-major op id: messages it sends
  const GraphNumbering ids_;
  int num_devices_ = 0;
  std::size_t max_ops_ = 0;
  std::size_t ops_kept_ = 0;
  bool cut_ = false;
  Tick cut_time_ = 0;
  Tick last_op_end_ = 0;
  bool finished_ = false;
  std::uint64_t transfers_ = 0;
  // The instant being collected and its records.
  Tick instant_ = std::numeric_limits<Tick>::min();
  std::vector<OpRecord> ops_now_;
  std::vector<TransferRecord> transfers_now_;
  std::vector<CollectiveRecord> collectives_now_;
  std::vector<MemoryRecord> memory_now_;
  std::unordered_map<std::uint64_t, Point> written_now_;  // compute ops of the instant
  std::vector<std::vector<Lane>> lanes_;  // [device * 4 + base]
  std::vector<std::uint8_t> memory_seen_;  // per device
  std::unordered_map<std::uint64_t, Producer> producers_;
  std::unordered_map<std::uint64_t, std::vector<Incoming>> consumers_;
  std::size_t peak_pending_ = 0;
  std::size_t unmatched_ = 0;
};

}  // namespace pipesim::chrome
