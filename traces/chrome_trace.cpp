#include "traces/chrome_trace.hpp"

#include <algorithm>
#include <ostream>
#include <string_view>
#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "traces/chrome_trace_events.hpp"

namespace pipesim {

namespace {

using chrome::kBaseThreads;

// What a trace event draws; `record` indexes the matching Timeline vector.
enum class Source : std::uint8_t { Op, Send, Recv, Collective, Memory, InitialMemory, FlowEnd, FlowStart };

struct Event {
  std::int32_t pid = 0;
  std::int32_t tid = 0;
  Tick ts = 0;
  Tick dur = 0;
  // Creation order of the slice an event belongs to (a flow event: its slice's), so a
  // slice's flow events follow it directly and ties never depend on std::sort.
  std::uint64_t order = 0;
  // For flow events: their slice's duration, so they sort with it (see key()).
  Tick slice_dur = 0;
  std::uint64_t id = 0;  // flow id, or the participant index of a collective slice
  std::uint32_t record = 0;
  Source source = Source::Op;

  bool is_counter() const { return source == Source::Memory || source == Source::InitialMemory; }
  // Within a thread: by time, a zero-length slice (with its flow events) before a longer
  // one starting at the same time. Perfetto binds a flow to the innermost slice still open
  // on the track, so a zero-length slice must be closed by the time the next one starts.
  auto key() const {
    return std::make_tuple(pid, is_counter(), tid, ts, slice_dur, order, static_cast<int>(source), id);
  }
};

class TraceBuilder {
 public:
  // Group g of a multi-run file: its processes are pid_base + device, named
  // "<prefix>device N", and its flow ids start at flow_id_base.
  TraceBuilder(const Schedule& schedule, const Timeline& timeline, const TraceOptions& options, int pid_base = 0,
               std::string process_prefix = {}, std::uint64_t flow_id_base = 0)
      : s_(schedule),
        t_(timeline),
        opt_(options),
        pid_base_(pid_base),
        prefix_(std::move(process_prefix)),
        flow_id_base_(flow_id_base) {}

  int prepare();  // collects and sorts the events; returns the number of devices
  void write_header(JsonWriter& w) const;
  void write_body(chrome::EventList& out) const;

 private:
  const Op& op_at(const OpRef& ref) const {
    PIPESIM_ASSERT(ref.device >= 0 && ref.device < static_cast<int>(s_.ops.size()));
    const auto& list = s_.ops[static_cast<std::size_t>(ref.device)];
    PIPESIM_ASSERT(ref.index >= 0 && ref.index < static_cast<int>(list.size()));
    return list[static_cast<std::size_t>(ref.index)];
  }
  void check_device(int device) const { PIPESIM_ASSERT(device >= 0 && device < num_devices_); }

  void add_slice(int device, int tid, Tick start, Tick end, Source source, std::size_t record,
                 std::uint64_t id = 0) {
    check_device(device);
    Event e;
    e.pid = device;
    e.tid = tid;
    e.ts = start;
    e.dur = std::max<Tick>(0, end - start);
    e.slice_dur = e.dur;
    e.order = events_.size();
    e.id = id;
    e.record = static_cast<std::uint32_t>(record);
    e.source = source;
    events_.push_back(e);
  }
  void collect_slices();
  void assign_lanes();
  void add_flow(std::size_t from_slice, std::size_t to_slice, std::uint64_t id);
  void collect_flows();
  void collect_counters();
  void write_metadata(chrome::EventList& out, int device) const;
  void write_event(chrome::EventList& out, const Event& e) const;

  const Schedule& s_;
  const Timeline& t_;
  const TraceOptions& opt_;
  const int pid_base_;
  const std::string prefix_;
  const std::uint64_t flow_id_base_;
  int num_devices_ = 0;
  std::vector<Event> events_;
  std::vector<int> lanes_;  // [device * 4 + base tid] = lanes used (at least 1)
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<std::vector<std::size_t>> op_slice_;  // [device][index] -> slice, or kNone
  std::vector<std::size_t> send_slice_;             // [transfer] -> slice
};

void TraceBuilder::collect_slices() {
  for (std::size_t i = 0; i < t_.ops.size(); ++i) {
    const OpRecord& r = t_.ops[i];
    (void)op_at(r.ref);  // every reference is checked once, here
    if (!is_compute(r.op.kind)) continue;  // drawn through its CollectiveRecord
    add_slice(r.ref.device, kComputeTid, r.start, r.end, Source::Op, i);
  }
  for (std::size_t i = 0; i < t_.transfers.size(); ++i) {
    const TransferRecord& r = t_.transfers[i];
    (void)op_at(r.from);
    (void)op_at(r.to);
    const chrome::Span send = chrome::send_span(r);
    const chrome::Span recv = chrome::recv_span(r);
    add_slice(r.from.device, kSendTid, send.start, send.end, Source::Send, i);
    add_slice(r.to.device, kRecvTid, recv.start, recv.end, Source::Recv, i);
  }
  for (std::size_t i = 0; i < t_.collectives.size(); ++i) {
    const CollectiveRecord& r = t_.collectives[i];
    for (std::size_t p = 0; p < r.participants.size(); ++p) {
      (void)op_at(r.participants[p]);
      add_slice(r.participants[p].device, kCollectiveTid, r.start, r.end, Source::Collective, i, p);
    }
  }
}

// Greedy interval partitioning in start order: a slice goes to the first lane of its
// thread that is free by its start. Lane 0 keeps the base tid, so the usual trace has
// exactly the four documented threads.
void TraceBuilder::assign_lanes() {
  std::sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) { return a.key() < b.key(); });
  lanes_.assign(static_cast<std::size_t>(num_devices_) * kBaseThreads, 1);
  std::vector<std::vector<Tick>> lane_end(lanes_.size());
  for (Event& e : events_) {
    auto& ends = lane_end[static_cast<std::size_t>(e.pid) * kBaseThreads + static_cast<std::size_t>(e.tid)];
    std::size_t lane = 0;
    while (lane < ends.size() && ends[lane] > e.ts) ++lane;
    if (lane == ends.size()) ends.push_back(0);
    ends[lane] = e.ts + e.dur;
    e.tid += static_cast<std::int32_t>(kBaseThreads * lane);
  }
  for (std::size_t i = 0; i < lanes_.size(); ++i)
    lanes_[i] = std::max(1, static_cast<int>(lane_end[i].size()));
}

void TraceBuilder::add_flow(std::size_t from_slice, std::size_t to_slice, std::uint64_t id) {
  // Both ends at the midpoint of their slice: strictly inside it whenever it lasts at
  // least 2 ns, so "enclosing slice" binding is unambiguous in Perfetto and catapult.
  const Event from = events_[from_slice];
  const Event to = events_[to_slice];
  Event s = from;
  s.ts = from.ts + from.dur / 2;
  s.dur = 0;
  s.id = id;
  s.source = Source::FlowStart;
  Event f = to;
  f.ts = to.ts + to.dur / 2;
  f.dur = 0;
  f.id = id;
  f.source = Source::FlowEnd;
  events_.push_back(s);
  events_.push_back(f);
}

void TraceBuilder::collect_flows() {
  op_slice_.resize(s_.ops.size());
  for (std::size_t d = 0; d < s_.ops.size(); ++d) op_slice_[d].assign(s_.ops[d].size(), kNone);
  send_slice_.assign(t_.transfers.size(), kNone);
  const std::size_t slices = events_.size();
  for (std::size_t i = 0; i < slices; ++i) {
    const Event& e = events_[i];
    if (e.source == Source::Op) {
      const OpRef& ref = t_.ops[e.record].ref;
      op_slice_[static_cast<std::size_t>(ref.device)][static_cast<std::size_t>(ref.index)] = i;
    } else if (e.source == Source::Send) {
      send_slice_[e.record] = i;
    }
  }
  std::uint64_t next_id = flow_id_base_ + 1;
  for (std::size_t i = 0; i < t_.transfers.size(); ++i) {
    const TransferRecord& r = t_.transfers[i];
    const std::size_t producer = op_slice_[static_cast<std::size_t>(r.from.device)][static_cast<std::size_t>(r.from.index)];
    const std::size_t consumer = op_slice_[static_cast<std::size_t>(r.to.device)][static_cast<std::size_t>(r.to.index)];
    // A partial timeline (e.g. a run that deadlocked) may lack either op: draw what exists.
    if (producer != kNone) add_flow(producer, send_slice_[i], next_id++);
    if (consumer != kNone) add_flow(send_slice_[i], consumer, next_id++);
  }
}

void TraceBuilder::collect_counters() {
  std::vector<bool> starts_at_zero(static_cast<std::size_t>(num_devices_), false);
  std::vector<bool> seen(static_cast<std::size_t>(num_devices_), false);
  for (const MemoryRecord& r : t_.memory) {
    check_device(r.device);
    const auto d = static_cast<std::size_t>(r.device);
    if (!seen[d]) starts_at_zero[d] = r.time == 0;
    seen[d] = true;
  }
  // The initial 0 anchors the counter track at t=0; a record at t=0 already does that.
  for (int d = 0; d < num_devices_; ++d) {
    if (starts_at_zero[static_cast<std::size_t>(d)]) continue;
    Event e;
    e.pid = d;
    e.order = events_.size();
    e.source = Source::InitialMemory;
    events_.push_back(e);
  }
  for (std::size_t i = 0; i < t_.memory.size(); ++i) {
    Event e;
    e.pid = t_.memory[i].device;
    e.ts = t_.memory[i].time;
    e.order = events_.size();
    e.record = static_cast<std::uint32_t>(i);
    e.source = Source::Memory;
    events_.push_back(e);
  }
}

void TraceBuilder::write_header(JsonWriter& w) const { chrome::write_trace_header(w, s_, opt_); }

void TraceBuilder::write_metadata(chrome::EventList& out, int device) const {
  chrome::process_metadata(out, pid_base_ + device, prefix_ + "device " + std::to_string(device), pid_base_ + device);
  for (int base = 0; base < kBaseThreads; ++base) {
    const int lanes = lanes_[static_cast<std::size_t>(device) * kBaseThreads + static_cast<std::size_t>(base)];
    for (int lane = 0; lane < lanes; ++lane) chrome::thread_metadata(out, pid_base_ + device, base, lane);
  }
}

void TraceBuilder::write_event(chrome::EventList& out, const Event& e) const {
  const int pid = pid_base_ + e.pid;
  switch (e.source) {
    case Source::Op:
      chrome::op_slice(out, s_, pid, e.tid, t_.ops[e.record]);
      break;
    case Source::Send:
    case Source::Recv: {
      const TransferRecord& r = t_.transfers[e.record];
      const bool send = e.source == Source::Send;
      chrome::transfer_slice(out, pid, e.tid, send ? chrome::send_span(r) : chrome::recv_span(r), r, op_at(r.from),
                             op_at(r.to), send);
      break;
    }
    case Source::Collective: {
      const CollectiveRecord& r = t_.collectives[e.record];
      chrome::collective_slice(out, pid, e.tid, r, op_at(r.participants[e.id]));
      break;
    }
    case Source::Memory:
    case Source::InitialMemory: {
      const std::int64_t bytes = e.source == Source::Memory ? t_.memory[e.record].bytes : 0;
      const auto& statics = opt_.static_memory_bytes;
      chrome::memory_counter(out, pid, e.ts, bytes, statics.empty() ? nullptr : &statics.at(static_cast<std::size_t>(e.pid)));
      break;
    }
    case Source::FlowStart:
    case Source::FlowEnd:
      chrome::flow_event(out, pid, e.tid, e.ts, e.id, e.source == Source::FlowStart);
      break;
  }
}

int TraceBuilder::prepare() {
  num_devices_ = std::max(s_.num_devices, static_cast<int>(s_.ops.size()));
  collect_slices();
  assign_lanes();
  if (opt_.flows) collect_flows();
  if (opt_.memory) collect_counters();
  std::sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) { return a.key() < b.key(); });
  return num_devices_;
}

void TraceBuilder::write_body(chrome::EventList& out) const {
  constexpr std::size_t kProgressEvery = 1 << 16;
  const auto& progress = opt_.progress;
  if (progress) progress(0, events_.size());
  auto next = events_.begin();
  for (int d = 0; d < num_devices_; ++d) {
    write_metadata(out, d);
    for (; next != events_.end() && next->pid == d; ++next) {
      write_event(out, *next);
      if (progress) {
        const auto done = static_cast<std::size_t>(next - events_.begin()) + 1;
        if (done % kProgressEvery == 0) progress(done, events_.size());
      }
    }
  }
  if (progress) progress(events_.size(), events_.size());
}

}  // namespace

void write_chrome_trace(std::ostream& out, const Schedule& schedule, const Timeline& timeline,
                        const TraceOptions& options) {
  TraceBuilder builder(schedule, timeline, options);
  builder.prepare();
  JsonWriter w(out);
  builder.write_header(w);
  chrome::EventList list(w);
  builder.write_body(list);
  chrome::write_trace_footer(w);
}

void write_chrome_trace_groups(std::ostream& out, const std::vector<TraceGroup>& groups, const TraceOptions& options) {
  PIPESIM_ASSERT(!groups.empty());
  std::vector<TraceBuilder> builders;
  builders.reserve(groups.size());
  int pid_stride = 0;
  for (const TraceGroup& g : groups) pid_stride = std::max({pid_stride, g.schedule.num_devices,
                                                            static_cast<int>(g.schedule.ops.size())});
  std::uint64_t flow_base = 0;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const TraceGroup& g = groups[i];
    builders.emplace_back(g.schedule, g.timeline, options, static_cast<int>(i) * pid_stride, g.label + ": ",
                          flow_base);
    builders.back().prepare();
    flow_base += 2 * g.timeline.transfers.size();
  }
  JsonWriter w(out);
  builders.front().write_header(w);
  chrome::EventList list(w);
  for (const TraceBuilder& b : builders) b.write_body(list);
  chrome::write_trace_footer(w);
}

}  // namespace pipesim
