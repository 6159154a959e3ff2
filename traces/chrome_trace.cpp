#include "traces/chrome_trace.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <ostream>
#include <string_view>
#include <tuple>
#include <utility>

#include "schedules/error.hpp"
#include "schedules/op_text.hpp"

namespace pipesim {

namespace {

constexpr int kBaseThreads = 4;  // compute, send, recv, collective; lane k adds 4*k
constexpr std::string_view kThreadNames[kBaseThreads] = {"compute", "send", "recv", "collective"};

std::string_view category_of(OpKind kind) {
  switch (kind) {
    case OpKind::F: return "forward";
    case OpKind::B: return "backward";
    case OpKind::I: return "backward-input";
    case OpKind::W: return "backward-weight";
    case OpKind::GradSync: return "grad-sync";
    case OpKind::OptStep: return "optimizer";
  }
  return "?";
}

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

// Minimal JSON output: integers via to_chars (ostream << would follow the global locale
// and could insert digit grouping), strings escaped per RFC 8259.
class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}

  JsonWriter& raw(std::string_view text) {
    out_.write(text.data(), static_cast<std::streamsize>(text.size()));
    return *this;
  }
  JsonWriter& integer(std::int64_t value) {
    char buf[24];
    const auto res = std::to_chars(buf, buf + sizeof buf, value);
    return raw(std::string_view(buf, static_cast<std::size_t>(res.ptr - buf)));
  }
  JsonWriter& micros(Tick ns) { return raw(format_trace_us(ns)); }
  JsonWriter& string(std::string_view text) {
    raw("\"");
    std::size_t plain = 0;  // start of the run of characters that need no escaping
    for (std::size_t i = 0; i < text.size(); ++i) {
      const auto c = static_cast<unsigned char>(text[i]);
      if (c >= 0x20 && c != '"' && c != '\\') continue;
      raw(text.substr(plain, i - plain));
      plain = i + 1;
      switch (c) {
        case '"': raw("\\\""); break;
        case '\\': raw("\\\\"); break;
        case '\n': raw("\\n"); break;
        case '\t': raw("\\t"); break;
        case '\r': raw("\\r"); break;
        default: {
          static constexpr char kHex[] = "0123456789abcdef";
          const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
          raw(std::string_view(esc, 6));
        }
      }
    }
    return raw(text.substr(plain)).raw("\"");
  }
  // ,"key": — every field after an object's first.
  JsonWriter& key(std::string_view name) { return raw(",\"").raw(name).raw("\":"); }

 private:
  std::ostream& out_;
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
  void write_body(JsonWriter& w, bool& first) const;

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
  void write_metadata(JsonWriter& w, int device, bool& first) const;
  void write_event(JsonWriter& w, const Event& e) const;

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
    // Occupancy is what the sender's link is busy with; without it (latency-only or free
    // links) show the whole ready..arrival window rather than an invisible sliver.
    if (r.link_end > r.link_start)
      add_slice(r.from.device, kSendTid, r.link_start, r.link_end, Source::Send, i);
    else
      add_slice(r.from.device, kSendTid, r.ready, r.arrival, Source::Send, i);
    add_slice(r.to.device, kRecvTid, r.link_start, r.arrival, Source::Recv, i);
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

void TraceBuilder::write_header(JsonWriter& w) const {
  w.raw("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"title\":");
  w.string(opt_.title.empty() ? s_.name : opt_.title);
  w.key("schedule").string(s_.name);
  w.key("devices").integer(s_.num_devices);
  w.key("stages").integer(s_.num_stages);
  w.key("pipelines").integer(s_.num_pipelines);
  w.key("microbatches").integer(s_.microbatches);
  w.key("iterations").integer(s_.iterations);
  for (const auto& [k, v] : opt_.metadata) w.raw(",").string(k).raw(":").string(v);
  w.raw("},\n\"traceEvents\":[\n");
}

void TraceBuilder::write_metadata(JsonWriter& w, int device, bool& first) const {
  auto begin = [&](std::string_view name, int tid) -> JsonWriter& {
    w.raw(first ? "" : ",\n");
    first = false;
    w.raw("{\"name\":\"").raw(name).raw("\",\"ph\":\"M\",\"pid\":").integer(pid_base_ + device);
    return w.key("tid").integer(tid).raw(",\"args\":{");
  };
  begin("process_name", 0).raw("\"name\":").string(prefix_ + "device " + std::to_string(device)).raw("}}");
  begin("process_sort_index", 0).raw("\"sort_index\":").integer(pid_base_ + device).raw("}}");
  for (int base = 0; base < kBaseThreads; ++base) {
    const int lanes = lanes_[static_cast<std::size_t>(device) * kBaseThreads + static_cast<std::size_t>(base)];
    for (int lane = 0; lane < lanes; ++lane) {
      const int tid = base + kBaseThreads * lane;
      std::string name(kThreadNames[base]);
      if (lane > 0) name += " " + std::to_string(lane + 1);
      begin("thread_name", tid).raw("\"name\":").string(name).raw("}}");
      begin("thread_sort_index", tid).raw("\"sort_index\":").integer(base * 100 + lane).raw("}}");
    }
  }
}

void TraceBuilder::write_event(JsonWriter& w, const Event& e) const {
  auto begin = [&](std::string_view name, std::string_view cat, std::string_view ph) -> JsonWriter& {
    w.raw(",\n{\"name\":").string(name).key("cat").string(cat).key("ph").string(ph);
    return w.key("pid").integer(pid_base_ + e.pid).key("tid").integer(e.tid).key("ts").micros(e.ts);
  };
  switch (e.source) {
    case Source::Op: {
      const OpRecord& r = t_.ops[e.record];
      const std::string text = to_string(r.op);
      begin(text, category_of(r.op.kind), "X").key("dur").micros(e.dur);
      w.raw(",\"args\":{\"stage\":").integer(r.op.stage).key("microbatch").integer(r.op.microbatch);
      w.key("pipeline").integer(r.op.pipeline).key("chunk").integer(s_.chunk_of(r.op));
      w.key("op").string(text).key("weight_version").integer(r.weight_version);
      w.key("index").integer(r.ref.index).raw("}}");
      break;
    }
    case Source::Send:
    case Source::Recv: {
      const TransferRecord& r = t_.transfers[e.record];
      const std::string from = to_string(op_at(r.from));
      const std::string to = to_string(op_at(r.to));
      const bool send = e.source == Source::Send;
      begin(from + " -> " + to, send ? "send" : "recv", "X").key("dur").micros(e.dur);
      w.raw(",\"args\":{\"bytes\":").integer(r.bytes).key("from").string(from).key("to").string(to);
      w.key("peer").integer(send ? r.to.device : r.from.device).raw("}}");
      break;
    }
    case Source::Collective: {
      const CollectiveRecord& r = t_.collectives[e.record];
      const Op& op = op_at(r.participants[e.id]);
      begin(to_string(op), category_of(op.kind), "X").key("dur").micros(e.dur);
      w.raw(",\"args\":{\"bytes\":").integer(r.bytes);
      w.key("participants").integer(static_cast<std::int64_t>(r.participants.size())).raw("}}");
      break;
    }
    case Source::Memory:
    case Source::InitialMemory: {
      const std::int64_t bytes = e.source == Source::Memory ? t_.memory[e.record].bytes : 0;
      const auto& statics = opt_.static_memory_bytes;
      if (statics.empty()) {
        begin("activation memory", "memory", "C").raw(",\"args\":{\"bytes\":").integer(bytes).raw("}}");
      } else {  // stacked: what the device always holds, plus the activations of the moment
        const std::int64_t fixed = statics.at(static_cast<std::size_t>(e.pid));
        begin("device memory", "memory", "C").raw(",\"args\":{\"static\":").integer(fixed);
        w.key("activations").integer(bytes).raw("}}");
      }
      break;
    }
    case Source::FlowStart:
    case Source::FlowEnd: {
      const bool start = e.source == Source::FlowStart;
      begin("transfer", "flow", start ? "s" : "f").key("id").integer(static_cast<std::int64_t>(e.id));
      w.raw(start ? "}" : ",\"bp\":\"e\"}");
      break;
    }
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

void TraceBuilder::write_body(JsonWriter& w, bool& first) const {
  auto next = events_.begin();
  for (int d = 0; d < num_devices_; ++d) {
    write_metadata(w, d, first);
    for (; next != events_.end() && next->pid == d; ++next) write_event(w, *next);
  }
}

}  // namespace

std::string format_trace_us(Tick ns) {
  const bool negative = ns < 0;
  const auto mag = negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  std::string text = std::to_string(mag / 1000);
  const auto frac = static_cast<unsigned>(mag % 1000);
  text += '.';
  text += static_cast<char>('0' + frac / 100);
  text += static_cast<char>('0' + frac / 10 % 10);
  text += static_cast<char>('0' + frac % 10);
  return negative ? "-" + text : text;
}

void write_chrome_trace(std::ostream& out, const Schedule& schedule, const Timeline& timeline,
                        const TraceOptions& options) {
  TraceBuilder builder(schedule, timeline, options);
  builder.prepare();
  JsonWriter w(out);
  builder.write_header(w);
  bool first = true;
  builder.write_body(w, first);
  w.raw("\n]}\n");
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
  bool first = true;
  for (const TraceBuilder& b : builders) b.write_body(w, first);
  w.raw("\n]}\n");
}

void write_chrome_trace_file(const std::string& path, const Schedule& schedule,
                             const Timeline& timeline, const TraceOptions& options) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw InputError("cannot write '" + path + "': " + std::strerror(errno));
  write_chrome_trace(file, schedule, timeline, options);
  file.flush();
  if (!file) throw InputError("cannot write '" + path + "': " + std::strerror(errno));
}

}  // namespace pipesim
