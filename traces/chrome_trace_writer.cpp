#include "traces/chrome_trace_writer.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "schedules/dependencies.hpp"

namespace pipesim::chrome {

TraceWriter::TraceWriter(EventList& out, const Schedule& schedule, const TraceOptions& options, TraceGroupPlace place,
                         std::size_t max_ops)
    : out_(out),
      s_(schedule),
      opt_(options),
      place_(std::move(place)),
      outputs_(cross_device_outputs(schedule)),
      ids_(schedule),
      max_ops_(max_ops) {
  num_devices_ = std::max(s_.num_devices, static_cast<int>(s_.ops.size()));
  PIPESIM_ASSERT(opt_.static_memory_bytes.empty() ||
                 opt_.static_memory_bytes.size() >= static_cast<std::size_t>(num_devices_));
  lanes_.resize(static_cast<std::size_t>(num_devices_) * kBaseThreads);
  memory_seen_.assign(static_cast<std::size_t>(num_devices_), 0);
  for (int d = 0; d < num_devices_; ++d) {
    const int pid = place_.pid_base + d;
    process_metadata(out_, pid, place_.prefix + "device " + std::to_string(d), pid);
    for (int base = 0; base < kBaseThreads; ++base) {
      thread_metadata(out_, pid, base, 0);
      lanes_[static_cast<std::size_t>(d) * kBaseThreads + static_cast<std::size_t>(base)].push_back(Lane{});
    }
  }
}

const Op& TraceWriter::op_at(const OpRef& ref) const {
  PIPESIM_ASSERT(ref.device >= 0 && ref.device < static_cast<int>(s_.ops.size()));
  const auto& list = s_.ops[static_cast<std::size_t>(ref.device)];
  PIPESIM_ASSERT(ref.index >= 0 && ref.index < static_cast<int>(list.size()));
  return list[static_cast<std::size_t>(ref.index)];
}

void TraceWriter::at(Tick time) {
  if (time == instant_) return;
  PIPESIM_ASSERT(time > instant_);  // records come in report order
  flush();
  instant_ = time;
}

void TraceWriter::add(const OpRecord& r) { hold(ops_now_, r, r.end); }
void TraceWriter::add(const TransferRecord& r) { hold(transfers_now_, r, r.arrival); }
void TraceWriter::add(const CollectiveRecord& r) { hold(collectives_now_, r, r.end); }
void TraceWriter::add(const MemoryRecord& r) { hold(memory_now_, r, r.time); }

void TraceWriter::flush() {
  for (const OpRecord& r : ops_now_) write(r);
  for (const TransferRecord& r : transfers_now_) write(r);
  for (const CollectiveRecord& r : collectives_now_) write(r);
  for (const MemoryRecord& r : memory_now_) write(r);
  ops_now_.clear();
  transfers_now_.clear();
  collectives_now_.clear();
  memory_now_.clear();
  written_now_.clear();
}

int TraceWriter::place(int device, int base, Tick start, Tick end, bool flows_later) {
  PIPESIM_ASSERT(device >= 0 && device < num_devices_);
  auto& lanes = lanes_[static_cast<std::size_t>(device) * kBaseThreads + static_cast<std::size_t>(base)];
  const bool pinned = end <= start && flows_later;
  std::size_t lane = 0;
  while (lane < lanes.size() && !(lanes[lane].end < start || (lanes[lane].end == start && !lanes[lane].pinned)))
    ++lane;
  if (lane == lanes.size()) {
    lanes.push_back(Lane{});
    thread_metadata(out_, place_.pid_base + device, base, static_cast<int>(lane));
  }
  lanes[lane] = Lane{std::max(start, end), pinned};  // start >= the lane's end: it only grows
  return lane_tid(base, static_cast<int>(lane));
}

void TraceWriter::flow(const Point& from, const Point& to, std::uint64_t id) {
  flow_event(out_, from.pid, from.tid, from.ts, id, true);
  flow_event(out_, to.pid, to.tid, to.ts, id, false);
}

void TraceWriter::note_pending() { peak_pending_ = std::max(peak_pending_, producers_.size() + consumers_.size()); }

void TraceWriter::write(const OpRecord& r) {
  if (cut_) return;
  if (max_ops_ > 0 && ops_kept_ == max_ops_) {
    cut_ = true;
    cut_time_ = last_op_end_;
    return;
  }
  ++ops_kept_;
  last_op_end_ = r.end;
  const Op& op = op_at(r.ref);
  if (!is_compute(op.kind)) return;  // GradSync: drawn through its CollectiveRecord
  // Its incoming arrows are drawn right after it; outgoing ones when its transfers arrive.
  const int sends = outputs_[pipesim::at(ids_.id(r.ref.device, static_cast<std::uint32_t>(r.ref.index)))];
  const int tid = place(r.ref.device, kComputeTid, r.start, r.end, opt_.flows && sends > 0);
  const int pid = place_.pid_base + r.ref.device;
  op_slice(out_, s_, pid, tid, r);
  if (!opt_.flows) return;
  const Point here{pid, tid, flow_point(r.start, std::max<Tick>(0, r.end - r.start))};
  written_now_[key(r.ref)] = here;
  if (auto it = consumers_.find(key(r.ref)); it != consumers_.end()) {
    for (const Incoming& in : it->second) flow(in.from, here, in.id);
    consumers_.erase(it);
  }
  if (sends > 0) {
    producers_[key(r.ref)] = Producer{here, sends};
    note_pending();
  }
}

void TraceWriter::write(const TransferRecord& r) {
  if (cut_) return;
  const Op& from = op_at(r.from);
  const Op& to = op_at(r.to);
  const std::uint64_t index = transfers_++;
  const Span send = send_span(r);
  const Span recv = recv_span(r);
  // The send slice's arrow to a consumer still to end is drawn then.
  const int send_tid = place(r.from.device, kSendTid, send.start, send.end, opt_.flows && is_compute(to.kind));
  transfer_slice(out_, place_.pid_base + r.from.device, send_tid, send, r, from, to, true);
  const int recv_tid = place(r.to.device, kRecvTid, recv.start, recv.end, false);
  transfer_slice(out_, place_.pid_base + r.to.device, recv_tid, recv, r, from, to, false);
  if (!opt_.flows) return;
  const std::uint64_t id = place_.flow_id_base + 2 * index;
  const Point at_send{place_.pid_base + r.from.device, send_tid,
                      flow_point(send.start, std::max<Tick>(0, send.end - send.start))};
  if (is_compute(from.kind)) {  // a send op is not drawn as a slice: no arrow from it
    if (auto it = producers_.find(key(r.from)); it != producers_.end()) {
      flow(it->second.point, at_send, id + 1);
      if (--it->second.remaining == 0) producers_.erase(it);
    } else {
      ++unmatched_;
    }
  }
  // The consumer ends after the arrival, or at it (then it was written just before); a
  // GradSync consumer is not drawn as a slice.
  if (!is_compute(to.kind)) return;
  if (auto it = written_now_.find(key(r.to)); it != written_now_.end()) {
    flow(at_send, it->second, id + 2);
  } else {
    consumers_[key(r.to)].push_back(Incoming{id + 2, at_send});
    note_pending();
  }
}

void TraceWriter::write(const CollectiveRecord& r) {
  if (cut_) return;
  for (const OpRef& p : r.participants) {
    const int tid = place(p.device, kCollectiveTid, r.start, r.end, false);
    collective_slice(out_, place_.pid_base + p.device, tid, r, op_at(p));
  }
}

void TraceWriter::write(const MemoryRecord& r) {
  if (cut_ || !opt_.memory) return;
  PIPESIM_ASSERT(r.device >= 0 && r.device < num_devices_);
  const auto d = static_cast<std::size_t>(r.device);
  const std::int64_t* statics = opt_.static_memory_bytes.empty() ? nullptr : &opt_.static_memory_bytes[d];
  const int pid = place_.pid_base + r.device;
  // The initial 0 anchors the counter track at t=0; a record at t=0 already does that.
  if (!memory_seen_[d] && r.time != 0) memory_counter(out_, pid, 0, 0, statics);
  memory_seen_[d] = 1;
  memory_counter(out_, pid, r.time, r.bytes, statics);
}

void TraceWriter::finish() {
  PIPESIM_ASSERT(!finished_);
  finished_ = true;
  flush();
  for (const TraceCounter& c : opt_.counters) {
    PIPESIM_ASSERT(c.device >= 0 && c.device < num_devices_);
    value_counter(out_, place_.pid_base + c.device, c);
  }
  if (!opt_.memory) return;
  for (int d = 0; d < num_devices_; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (memory_seen_[i]) continue;
    memory_counter(out_, place_.pid_base + d, 0, 0,
                   opt_.static_memory_bytes.empty() ? nullptr : &opt_.static_memory_bytes[i]);
  }
}

TraceWriter::Retained TraceWriter::retained() const {
  Retained out{producers_.size(), consumers_.size(), 0};
  for (const auto& lanes : lanes_) out.lanes += lanes.size();
  return out;
}

}  // namespace pipesim::chrome
