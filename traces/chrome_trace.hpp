#pragma once
// Chrome Trace Event Format (JSON object form) for one simulated run; loads in the Perfetto
// UI (ui.perfetto.dev) and chrome://tracing.
//
// Layout
//   pid = device ("device N", process_sort_index N); threads per device:
//     tid 0 "compute"     F/B/I/W/OptStep ops as complete ("X") events
//     tid 1 "send"        outgoing transfers: link_start..link_end, or ready..arrival when
//                         the link has no occupancy (latency only / free links)
//     tid 2 "recv"        incoming transfers: link_start..arrival
//     tid 3 "collective"  GradSync collectives, one slice per participant
//   Slices on one thread never overlap (the trace format wants proper nesting); a slice that
//   would overlap an earlier one goes to an extra lane thread tid = base + 4*lane named
//   e.g. "recv 2" (a device receiving from two neighbours at once).
//   Flow arrows per transfer: producer op -> send slice -> consumer op, two "s"/"f" pairs
//   (cat "flow", name "transfer"); every flow event sits at the midpoint of the slice it
//   belongs to, and "f" uses "bp":"e", so both ends bind to their enclosing slice.
//   Counter "activation memory" {"bytes": N} per device, starting with 0 at t=0 (or
//   "device memory" {"static": S, "activations": N} when TraceOptions gives static bytes).
//
// Units: "ts"/"dur" are microseconds (the format's unit) written with exactly 3 decimals,
// i.e. integer nanoseconds without any floating-point rounding; displayTimeUnit is "ns".
// Output is a pure function of the input: fixed key order, fixed number formatting, events
// in the records' report order (traces/chrome_trace_writer.hpp, the one writer, says how
// lanes, flows and ties are decided), so identical input gives byte-identical files.
// GradSync op records are not drawn on the compute thread: their collectives show them.
// This is the writer's batch driver, for a whole Timeline in memory;
// traces/chrome_trace_stream.hpp is its streaming driver (the same bytes while the engine
// runs, for large traces, see tools/trace_limit.hpp).
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "schedules/schedule.hpp"
#include "sim/timeline.hpp"
#include "traces/json_writer.hpp"  // format_trace_us

namespace pipesim {

// A counter track's value at one time ("C" event on a device's process): e.g. a measured
// run's training and validation loss (`pipesim run`), one key per series.
struct TraceCounter {
  std::string name;
  int device = 0;
  Tick time = 0;
  std::vector<std::pair<std::string, double>> values;  // written with 6 decimals
};

struct TraceOptions {
  std::string title;  // otherData.title; empty = the schedule's name
  // Extra otherData entries (e.g. {"cost model", "uniform"}), written as strings in order.
  std::vector<std::pair<std::string, std::string>> metadata;
  bool flows = true;   // flow arrows along transfers
  bool memory = true;  // activation-memory counters
  // Bytes each device holds all the time (weights, gradients, optimizer state), when the
  // cost model knows them: the counter becomes "device memory" {static, activations}, so
  // the viewer stacks the two. Empty: an "activation memory" {bytes} counter.
  std::vector<std::int64_t> static_memory_bytes;
  // Extra counters, written after the records in this order.
  std::vector<TraceCounter> counters;
  // Called by write_chrome_trace with the records written so far and their total, before
  // the first, about every 65536 and after the last (tools/progress.hpp shows it); it
  // changes nothing in the file (write_chrome_trace_groups: per group; the streaming
  // driver ignores it).
  std::function<void(std::size_t done, std::size_t total)> progress;
};

// Thread ids (base lanes) within each device's process.
inline constexpr int kComputeTid = 0;
inline constexpr int kSendTid = 1;
inline constexpr int kRecvTid = 2;
inline constexpr int kCollectiveTid = 3;

// Streams the trace to `out`. The timeline must belong to `schedule` (its OpRefs index
// schedule.ops); a record that does not is a broken invariant (PIPESIM_ASSERT).
void write_chrome_trace(std::ostream& out, const Schedule& schedule, const Timeline& timeline,
                        const TraceOptions& options = {});

// Several timelines in one file, one process group each (`pipesim validate`: "predicted"
// and "measured"): group g's devices are processes g*D + device (D = the most devices of
// any group), named "<label>: device N"; the header (otherData) is the first group's.
struct TraceGroup {
  std::string label;
  const Schedule& schedule;
  const Timeline& timeline;
};
void write_chrome_trace_groups(std::ostream& out, const std::vector<TraceGroup>& groups,
                               const TraceOptions& options = {});

}  // namespace pipesim
