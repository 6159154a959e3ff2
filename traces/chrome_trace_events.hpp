#pragma once
// The events of pipesim's Chrome traces, one function per kind, written by the one writer
// (traces/chrome_trace_writer.hpp), whose batch and streaming drivers so write every event
// with the same fields, names, categories and number formatting. The layout (processes,
// threads, lanes, flows, counters) is documented in traces/chrome_trace.hpp.
//
//   {"displayTimeUnit":"ns","otherData":{...},        <- write_trace_header
//   "traceEvents":[
//   {"name":"process_name","ph":"M",...},              <- EventList::next() puts ",\n"
//   {"name":"F0.0","cat":"forward","ph":"X",...},         between events
//   ...
//   ]}                                                 <- write_trace_footer
#include <cstdint>
#include <string>
#include <string_view>

#include "schedules/schedule.hpp"
#include "sim/records.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/json_writer.hpp"

namespace pipesim::chrome {

inline constexpr int kBaseThreads = 4;  // compute, send, recv, collective; lane k adds 4*k
inline int lane_tid(int base, int lane) { return base + kBaseThreads * lane; }

// "forward", "backward", "backward-input", "backward-weight", "grad-sync", "optimizer".
std::string_view category_of(OpKind kind);

// Where a transfer's slices lie. Send: the link occupancy, or the whole ready..arrival
// window when the link has none (latency-only or free links) rather than an invisible
// sliver. Recv: link_start..arrival.
struct Span {
  Tick start = 0;
  Tick end = 0;
};
Span send_span(const TransferRecord& r);
Span recv_span(const TransferRecord& r);

// The items of the traceEvents array: next() writes the separator before each one.
class EventList {
 public:
  explicit EventList(JsonWriter& w) : w_(w) {}
  JsonWriter& next() {
    w_.raw(first_ ? "" : ",\n");
    first_ = false;
    return w_;
  }
  JsonWriter& writer() { return w_; }

 private:
  JsonWriter& w_;
  bool first_ = true;
};

// Everything up to and including `"traceEvents":[` and its newline; `extra` entries are
// appended to otherData after options.metadata.
void write_trace_header(JsonWriter& w, const Schedule& s, const TraceOptions& options,
                        const std::vector<std::pair<std::string, std::string>>& extra = {});
void write_trace_footer(JsonWriter& w);

// Metadata ("M") events.
void process_metadata(EventList& out, int pid, std::string_view name, int sort_index);
void thread_metadata(EventList& out, int pid, int base, int lane);  // "recv 2", sort base*100+lane

// Complete ("X") slices; dur = max(0, end - start).
void op_slice(EventList& out, const Schedule& s, int pid, int tid, const OpRecord& r);
void transfer_slice(EventList& out, int pid, int tid, Span span, const TransferRecord& r, const Op& from,
                    const Op& to, bool send);
void collective_slice(EventList& out, int pid, int tid, const CollectiveRecord& r, const Op& participant);

// Counter ("C"): "activation memory" {bytes}, or with `static_bytes` set "device memory"
// {static, activations}, stacked by the viewer.
void memory_counter(EventList& out, int pid, Tick ts, std::int64_t bytes, const std::int64_t* static_bytes);
void value_counter(EventList& out, int pid, const TraceCounter& c);

// Flow ("s" start or "f" end with "bp":"e"), cat "flow", name "transfer".
void flow_event(EventList& out, int pid, int tid, Tick ts, std::uint64_t id, bool start);

// A flow event's place inside a slice: its midpoint, strictly inside whenever it lasts at
// least 2 ns, so "enclosing slice" binding is unambiguous in Perfetto and catapult.
inline Tick flow_point(Tick start, Tick dur) { return start + dur / 2; }

}  // namespace pipesim::chrome
