#include "traces/chrome_trace_events.hpp"

#include <algorithm>
#include <cstdio>

#include "schedules/op_text.hpp"

namespace pipesim {

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

namespace chrome {
namespace {

constexpr std::string_view kThreadNames[kBaseThreads] = {"compute", "send", "recv", "collective"};

JsonWriter& begin(EventList& out, std::string_view name, std::string_view cat, std::string_view ph, int pid, int tid,
                  Tick ts) {
  JsonWriter& w = out.next();
  w.raw("{\"name\":").string(name).key("cat").string(cat).key("ph").string(ph);
  return w.key("pid").integer(pid).key("tid").integer(tid).key("ts").micros(ts);
}

JsonWriter& begin_metadata(EventList& out, std::string_view name, int pid, int tid) {
  JsonWriter& w = out.next();
  w.raw("{\"name\":\"").raw(name).raw("\",\"ph\":\"M\",\"pid\":").integer(pid);
  return w.key("tid").integer(tid).raw(",\"args\":{");
}

}  // namespace

std::string_view category_of(OpKind kind) {
  switch (kind) {
    case OpKind::F: return "forward";
    case OpKind::B: return "backward";
    case OpKind::I: return "backward-input";
    case OpKind::W: return "backward-weight";
    case OpKind::GradSync: return "grad-sync";
    case OpKind::OptStep: return "optimizer";
    case OpKind::SendF: return "send-activation";
    case OpKind::RecvF: return "recv-activation";
    case OpKind::SendB: return "send-gradient";
    case OpKind::RecvB: return "recv-gradient";
  }
  return "?";
}

Span send_span(const TransferRecord& r) {
  if (r.link_end > r.link_start) return {r.link_start, r.link_end};
  return {r.ready, r.arrival};
}

Span recv_span(const TransferRecord& r) { return {r.link_start, r.arrival}; }

void write_trace_header(JsonWriter& w, const Schedule& s, const TraceOptions& options,
                        const std::vector<std::pair<std::string, std::string>>& extra) {
  w.raw("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"title\":");
  w.string(options.title.empty() ? s.name : options.title);
  w.key("schedule").string(s.name);
  w.key("devices").integer(s.num_devices);
  w.key("stages").integer(s.num_stages);
  w.key("pipelines").integer(s.num_pipelines);
  w.key("microbatches").integer(s.microbatches);
  w.key("iterations").integer(s.iterations);
  for (const auto& [k, v] : options.metadata) w.raw(",").string(k).raw(":").string(v);
  for (const auto& [k, v] : extra) w.raw(",").string(k).raw(":").string(v);
  w.raw("},\n\"traceEvents\":[\n");
}

void write_trace_footer(JsonWriter& w) { w.raw("\n]}\n"); }

void process_metadata(EventList& out, int pid, std::string_view name, int sort_index) {
  begin_metadata(out, "process_name", pid, 0).raw("\"name\":").string(name).raw("}}");
  begin_metadata(out, "process_sort_index", pid, 0).raw("\"sort_index\":").integer(sort_index).raw("}}");
}

void thread_metadata(EventList& out, int pid, int base, int lane) {
  const int tid = lane_tid(base, lane);
  std::string name(kThreadNames[base]);
  if (lane > 0) name += " " + std::to_string(lane + 1);
  begin_metadata(out, "thread_name", pid, tid).raw("\"name\":").string(name).raw("}}");
  begin_metadata(out, "thread_sort_index", pid, tid).raw("\"sort_index\":").integer(base * 100 + lane).raw("}}");
}

void op_slice(EventList& out, const Schedule& s, int pid, int tid, const OpRecord& r) {
  const std::string text = to_string(r.op);
  JsonWriter& w = begin(out, text, category_of(r.op.kind), "X", pid, tid, r.start);
  w.key("dur").micros(std::max<Tick>(0, r.end - r.start));
  w.raw(",\"args\":{\"stage\":").integer(r.op.stage).key("microbatch").integer(r.op.microbatch);
  w.key("pipeline").integer(r.op.pipeline).key("chunk").integer(s.chunk_of(r.op));
  w.key("op").string(text).key("weight_version").integer(r.weight_version);
  w.key("index").integer(r.ref.index).raw("}}");
}

void transfer_slice(EventList& out, int pid, int tid, Span span, const TransferRecord& r, const Op& from,
                    const Op& to, bool send) {
  const std::string from_text = to_string(from);
  const std::string to_text = to_string(to);
  JsonWriter& w = begin(out, from_text + " -> " + to_text, send ? "send" : "recv", "X", pid, tid, span.start);
  w.key("dur").micros(std::max<Tick>(0, span.end - span.start));
  w.raw(",\"args\":{\"bytes\":").integer(r.bytes).key("from").string(from_text).key("to").string(to_text);
  w.key("peer").integer(send ? r.to.device : r.from.device).raw("}}");
}

void collective_slice(EventList& out, int pid, int tid, const CollectiveRecord& r, const Op& participant) {
  JsonWriter& w = begin(out, to_string(participant), category_of(participant.kind), "X", pid, tid, r.start);
  w.key("dur").micros(std::max<Tick>(0, r.end - r.start));
  w.raw(",\"args\":{\"bytes\":").integer(r.bytes);
  w.key("participants").integer(static_cast<std::int64_t>(r.participants.size())).raw("}}");
}

void memory_counter(EventList& out, int pid, Tick ts, std::int64_t bytes, const std::int64_t* static_bytes) {
  if (static_bytes == nullptr) {
    begin(out, "activation memory", "memory", "C", pid, 0, ts).raw(",\"args\":{\"bytes\":").integer(bytes).raw("}}");
    return;
  }
  // Stacked: what the device always holds, plus the activations of the moment.
  JsonWriter& w = begin(out, "device memory", "memory", "C", pid, 0, ts);
  w.raw(",\"args\":{\"static\":").integer(*static_bytes).key("activations").integer(bytes).raw("}}");
}

void value_counter(EventList& out, int pid, const TraceCounter& c) {
  JsonWriter& w = begin(out, c.name, "counter", "C", pid, 0, c.time);
  const char* sep = ",\"args\":{";
  for (const auto& [key, value] : c.values) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6f", value);
    w.raw(sep).string(key).raw(":").raw(buf);
    sep = ",";
  }
  w.raw(c.values.empty() ? ",\"args\":{}}" : "}}");
}

void flow_event(EventList& out, int pid, int tid, Tick ts, std::uint64_t id, bool start) {
  JsonWriter& w = begin(out, "transfer", "flow", start ? "s" : "f", pid, tid, ts);
  w.key("id").integer(static_cast<std::int64_t>(id)).raw(start ? "}" : ",\"bp\":\"e\"}");
}

}  // namespace chrome
}  // namespace pipesim
