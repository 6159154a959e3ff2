#pragma once
// ChromeTraceStream: the streaming driver of the one Chrome trace writer
// (traces/chrome_trace_writer.hpp): the trace of a run written while the engine runs,
// record by record, so a 10^8-op trace never has to fit in memory. The bytes are those the
// batch driver (write_chrome_trace, traces/chrome_trace.hpp) writes for the run's Timeline.
//
// Retained state: one byte per op (its messages to other devices, from the dependency
// rules), O(devices x lanes) for lanes and counters, the records of the current instant,
// plus one entry per producer whose transfer is still in flight and one per transfer whose
// consumer has not ended.
#include <cstddef>
#include <iosfwd>

#include "schedules/schedule.hpp"
#include "sim/observer.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/chrome_trace_events.hpp"
#include "traces/chrome_trace_writer.hpp"
#include "traces/json_writer.hpp"

namespace pipesim {

class ChromeTraceStream final : public SimObserver {
 public:
  // Writes the header and every device's process and base-thread metadata at once.
  // `max_ops` > 0: the trace keeps the first max_ops op records and what comes before the
  // next one (traces/chrome_trace_writer.hpp), like tools/trace_limit.hpp's recorder. The
  // header is written first, so a truncation notice must be in options.metadata already.
  // `schedule` must outlive the writer (options are copied). InputError if its shape is
  // inconsistent (check_schedule_shape, as the engine would say).
  ChromeTraceStream(std::ostream& out, const Schedule& schedule, const TraceOptions& options = {},
                    std::size_t max_ops = 0);

  void on_op(const OpRecord& r) override { trace_.add(r); }
  void on_transfer(const TransferRecord& r) override { trace_.add(r); }
  void on_collective(const CollectiveRecord& r) override { trace_.add(r); }
  void on_memory(const MemoryRecord& r) override { trace_.add(r); }

  // Closes the trace after the run. Call exactly once; the figures below are final after it.
  void finish();

  bool truncated() const { return trace_.truncated(); }
  Tick cut_time() const { return trace_.cut_time(); }
  std::size_t ops_kept() const { return trace_.ops_kept(); }
  using Retained = chrome::TraceWriter::Retained;
  Retained retained() const { return trace_.retained(); }
  std::size_t peak_pending() const { return trace_.peak_pending(); }
  std::size_t unmatched_producers() const { return trace_.unmatched_producers(); }

 private:
  JsonWriter w_;
  chrome::EventList list_;
  chrome::TraceWriter trace_;
};

}  // namespace pipesim
