#include "traces/chrome_trace_stream.hpp"

#include <algorithm>
#include <ostream>
#include <string>

#include "core/error.hpp"

namespace pipesim {

ChromeTraceStream::ChromeTraceStream(std::ostream& out, const Schedule& schedule, const TraceOptions& options,
                                     std::size_t max_ops)
    : s_(schedule), opt_(options), w_(out), list_(w_), max_ops_(max_ops) {
  num_devices_ = std::max(s_.num_devices, static_cast<int>(s_.ops.size()));
  PIPESIM_ASSERT(opt_.static_memory_bytes.empty() ||
                 opt_.static_memory_bytes.size() >= static_cast<std::size_t>(num_devices_));
  lanes_.resize(static_cast<std::size_t>(num_devices_) * chrome::kBaseThreads);
  memory_seen_.assign(static_cast<std::size_t>(num_devices_), 0);
  chrome::write_trace_header(w_, s_, opt_);
  for (int d = 0; d < num_devices_; ++d) {
    chrome::process_metadata(list_, d, "device " + std::to_string(d), d);
    for (int base = 0; base < chrome::kBaseThreads; ++base) {
      chrome::thread_metadata(list_, d, base, 0);
      lanes_[static_cast<std::size_t>(d) * chrome::kBaseThreads + static_cast<std::size_t>(base)].push_back(Lane{});
    }
  }
}

const Op& ChromeTraceStream::op_at(const OpRef& ref) const {
  PIPESIM_ASSERT(ref.device >= 0 && ref.device < static_cast<int>(s_.ops.size()));
  const auto& list = s_.ops[static_cast<std::size_t>(ref.device)];
  PIPESIM_ASSERT(ref.index >= 0 && ref.index < static_cast<int>(list.size()));
  return list[static_cast<std::size_t>(ref.index)];
}

// The consumers on other devices that schedules/dependencies.hpp gives `op`: F(c,k,s) feeds
// F(c,k,s+1), B/I(c,k,s) feed B/I(c,k,s-1); B/I of the same stage and W stay on the device.
int ChromeTraceStream::cross_device_consumers(const Op& op, int device) const {
  const auto pipeline = static_cast<std::size_t>(op.pipeline);
  if (op.pipeline < 0 || pipeline >= s_.placement.size()) return 0;
  const auto& stages = s_.placement[pipeline];
  int next = -1;
  if (op.kind == OpKind::F) next = op.stage + 1;
  if (op.kind == OpKind::B || op.kind == OpKind::I) next = op.stage - 1;
  if (next < 0 || next >= static_cast<int>(stages.size())) return 0;
  return stages[static_cast<std::size_t>(next)] != device ? 1 : 0;
}

int ChromeTraceStream::place(int device, int base, Tick start, Tick end) {
  PIPESIM_ASSERT(device >= 0 && device < num_devices_);
  auto& lanes = lanes_[static_cast<std::size_t>(device) * chrome::kBaseThreads + static_cast<std::size_t>(base)];
  const bool positive = end > start;
  std::size_t lane = 0;
  while (lane < lanes.size() && !(lanes[lane].end < start || (lanes[lane].end == start && lanes[lane].positive)))
    ++lane;
  if (lane == lanes.size()) {
    lanes.push_back(Lane{});
    chrome::thread_metadata(list_, device, base, static_cast<int>(lane));
  }
  lanes[lane] = Lane{std::max(start, end), positive};  // start >= the lane's end: it only grows
  return chrome::lane_tid(base, static_cast<int>(lane));
}

void ChromeTraceStream::flow(const Point& from, const Point& to, std::uint64_t id) {
  chrome::flow_event(list_, from.pid, from.tid, from.ts, id, true);
  chrome::flow_event(list_, to.pid, to.tid, to.ts, id, false);
}

void ChromeTraceStream::note_pending() {
  peak_pending_ = std::max(peak_pending_, producers_.size() + consumers_.size());
}

void ChromeTraceStream::on_op(const OpRecord& r) {
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
  const int tid = place(r.ref.device, kComputeTid, r.start, r.end);
  chrome::op_slice(list_, s_, r.ref.device, tid, r);
  if (!opt_.flows) return;
  const Point here{r.ref.device, tid, chrome::flow_point(r.start, std::max<Tick>(0, r.end - r.start))};
  if (auto it = consumers_.find(key(r.ref)); it != consumers_.end()) {
    for (const Incoming& in : it->second) flow(in.from, here, in.id);
    consumers_.erase(it);
  }
  if (const int n = cross_device_consumers(op, r.ref.device); n > 0) {
    producers_[key(r.ref)] = Producer{here, n};
    note_pending();
  }
}

void ChromeTraceStream::on_transfer(const TransferRecord& r) {
  if (cut_) return;
  const Op& from = op_at(r.from);
  const Op& to = op_at(r.to);
  const std::uint64_t index = transfers_++;
  const chrome::Span send = chrome::send_span(r);
  const chrome::Span recv = chrome::recv_span(r);
  const int send_tid = place(r.from.device, kSendTid, send.start, send.end);
  chrome::transfer_slice(list_, r.from.device, send_tid, send, r, from, to, true);
  const int recv_tid = place(r.to.device, kRecvTid, recv.start, recv.end);
  chrome::transfer_slice(list_, r.to.device, recv_tid, recv, r, from, to, false);
  if (!opt_.flows) return;
  const Point at_send{r.from.device, send_tid, chrome::flow_point(send.start, std::max<Tick>(0, send.end - send.start))};
  if (auto it = producers_.find(key(r.from)); it != producers_.end()) {
    flow(it->second.point, at_send, 2 * index + 1);
    if (--it->second.remaining == 0) producers_.erase(it);
  } else {
    ++unmatched_;
  }
  // The consumer ends after the arrival; a GradSync consumer is not drawn as a slice.
  if (is_compute(to.kind)) {
    consumers_[key(r.to)].push_back(Incoming{2 * index + 2, at_send});
    note_pending();
  }
}

void ChromeTraceStream::on_collective(const CollectiveRecord& r) {
  if (cut_) return;
  for (const OpRef& p : r.participants) {
    const int tid = place(p.device, kCollectiveTid, r.start, r.end);
    chrome::collective_slice(list_, p.device, tid, r, op_at(p));
  }
}

void ChromeTraceStream::on_memory(const MemoryRecord& r) {
  if (cut_ || !opt_.memory) return;
  PIPESIM_ASSERT(r.device >= 0 && r.device < num_devices_);
  const auto d = static_cast<std::size_t>(r.device);
  const std::int64_t* statics = opt_.static_memory_bytes.empty() ? nullptr : &opt_.static_memory_bytes[d];
  // The initial 0 anchors the counter track at t=0; a record at t=0 already does that.
  if (!memory_seen_[d] && r.time != 0) chrome::memory_counter(list_, r.device, 0, 0, statics);
  memory_seen_[d] = 1;
  chrome::memory_counter(list_, r.device, r.time, r.bytes, statics);
}

void ChromeTraceStream::finish(const std::vector<std::int64_t>& static_memory_bytes) {
  PIPESIM_ASSERT(!finished_);
  finished_ = true;
  if (opt_.memory) {
    for (int d = 0; d < num_devices_; ++d) {
      const auto i = static_cast<std::size_t>(d);
      if (memory_seen_[i]) continue;
      chrome::memory_counter(list_, d, 0, 0, opt_.static_memory_bytes.empty() ? nullptr : &opt_.static_memory_bytes[i]);
    }
    if (opt_.static_memory_bytes.empty())
      for (std::size_t d = 0; d < static_memory_bytes.size() && d < static_cast<std::size_t>(num_devices_); ++d)
        chrome::static_memory_counter(list_, static_cast<int>(d), static_memory_bytes[d]);
  }
  chrome::write_trace_footer(w_);
}

ChromeTraceStream::Retained ChromeTraceStream::retained() const {
  Retained out{producers_.size(), consumers_.size(), 0};
  for (const auto& lanes : lanes_) out.lanes += lanes.size();
  return out;
}

}  // namespace pipesim
