// What an op's end hands on (sim/event_loop.hpp): each successor on the same device is
// satisfied at once, one on another device gets a message on the directed link (src, dst),
// FIFO behind earlier transfers for its occupancy, then the latency, which does not hold the
// link. And the communication ops (SEND_*, RECV_*, docs/schedule-format.md), which take no
// device time: the message of a send moves once its receive is posted. A transfer on a
// shared link goes on the wire as an activity instead (sim/event_loop_shared.cpp).
#include "sim/event_loop.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace pipesim {
namespace {

// What a message carries: a send's is that of the op whose result it sends.
Op message_of(const Op& producer) {
  if (!is_send(producer.kind)) return producer;
  return make_op(is_forward_comm(producer.kind) ? OpKind::F : OpKind::B, producer.stage, producer.microbatch,
                 producer.pipeline);
}

}  // namespace

void EventLoop::release_successors(SlotId id, int d) {
  const Slot& from = slots_[id];
  const bool sync = from.kind == OpKind::GradSync;
  const SlotId* next = slots_.successors(id);
  for (int k = 0; k < from.successors; ++k) {
    const SlotId to = next[k];
    Slot& st = slots_[to];
    const int dst = device_of(to);
    if (is_recv(st.kind)) [[unlikely]] {  // from its send: the message moves once it is posted
      offer_to_recv(id, to, d, dst);
      continue;
    }
    if (dst == d || sync) {
      if (carries_forward(from.kind, st.kind)) st.of.microbatch.forward_version = from.of.microbatch.forward_version;
      satisfy(to, id, now_);
      if (dst != d) try_start(dst, now_);
      continue;
    }
    send(id, to, d, dst, op_of(id));
  }
}

// Performance: inlined into release_successors, also now that the receives call it too.
[[gnu::always_inline]] inline void EventLoop::send(SlotId from, SlotId to, int src, int dst, const Op& producer) {
  const std::int64_t bytes =
      is_send(producer.kind) ? costs_.message_bytes(message_of(producer), scale_) : costs_.message_bytes(producer, scale_);
  const TransferCost cost = costs_.transfer(src, dst, bytes);
  PIPESIM_ASSERT(cost.occupancy >= 0 && cost.latency >= 0);
  const Tick latency = cost.hand_off() ? hand_off(src, dst, to, cost) : cost.latency;
  const std::size_t pair = link_index(src, dst);
  if (sharing_ && sharing_->shares_link(src, dst)) [[unlikely]]
    return send_shared(WireTransfer{from, to, src, dst, now_, 0, cost.occupancy, latency, bytes}, pair);
  Tick& link = link_free_.empty() ? sparse_link_free_[pair] : link_free_[pair];
  const Tick link_start = std::max(now_, link);
  const Tick link_end = later(link_start, cost.occupancy);
  const Tick arrival = later(link_end, latency);
  link = link_end;
  std::uint32_t record = TransferArrive::kNoRecord;
  if (wants_ & kTransferRecords) record = keep_record(TransferRecord{ref_of(from), ref_of(to), now_, link_start, link_end, arrival, bytes});
  queue_.push(arrival, TransferArrive{from, to, record});
}

// The receiving thread sleeps when its device has been idle since before now and the message
// is for the op it waits to start (or for a receive, which it has posted and waits behind):
// then the sender pays the wake-up call and the message the wake-up's latency. A device
// computing, or waiting for something else, finds the message when it gets to it, and so
// does one whose op or work ends now, or that reached a collective now (held until the
// tick's end, end_tick): it has not gone to sleep yet. ("Since before now", not
// "not busy": whether its end at this very tick was handled before the send depends on the
// order of events at one time, which a shared pool's finishes, pushed when they become the
// earliest, do not share with the fast path's.)
[[gnu::noinline]] Tick EventLoop::hand_off(int src, int dst, SlotId to, const TransferCost& cost) {
  PIPESIM_ASSERT(cost.sender >= 0 && cost.wake >= 0);
  const DeviceState& r = dev_[static_cast<std::size_t>(dst)];
  const bool asleep = !r.busy && !r.held && r.free_at < now_ && r.next < r.size &&
                      (slot_at(r.base, r.next) == to || is_recv(slots_[to].kind));
  Tick& sender = dev_[static_cast<std::size_t>(src)].host_work;  // the work after its op
  sender = later(sender, asleep ? later(cost.sender, cost.wake) : cost.sender);
  return asleep || !cost.latency_is_wake ? cost.latency : 0;
}

// A transfer's record, kept until it arrives (for the observer): its index in in_flight_.
[[gnu::noinline]] std::uint32_t EventLoop::keep_record(const TransferRecord& r) {
  if (free_records_.empty()) {
    in_flight_.push_back(r);
    return static_cast<std::uint32_t>(in_flight_.size() - 1);
  }
  const std::uint32_t i = free_records_.back();
  free_records_.pop_back();
  in_flight_[i] = r;
  return i;
}

void EventLoop::handle(const TransferArrive& e) {
  const SlotId to = e.to;
  if (e.record != TransferArrive::kNoRecord) {
    const TransferRecord r = in_flight_[e.record];
    free_records_.push_back(e.record);
    observer_->on_transfer(r);
  }
  satisfy(to, e.from, now_);
  if (is_recv(slots_[to].kind)) [[unlikely]]
    release_successors(to, device_of(to));  // the receive is done: its consumer may start
  try_start(device_of(to), now_);
}

// A send or a receive takes no device time and does not stop its device. A send is
// posted the moment the device reaches it, a receive likewise; the message moves (queued
// on the link like any other transfer) once both are, and the receive is done when it
// has arrived: then the op that uses it may start. A receive's slot keeps what it knows
// in Slot::of.recv.
[[gnu::noinline]] void EventLoop::run_comm(SlotId id, int d) {
  if (wants_ & kOpRecords) observer_->on_op(OpRecord{ref_of(id), op_of(id), now_, now_, -1});
  ++ops_done_;
  Slot& st = slots_[id];
  if (!is_recv(st.kind)) {
    release_successors(id, d);
    if (dev_[static_cast<std::size_t>(d)].host_work > 0) [[unlikely]] start_host_work(d);  // stops start_ops
    return;
  }
  const bool waiting = st.of.recv.state == RecvState::SendWaiting;
  st.of.recv.state = RecvState::Posted;
  if (waiting) start_transfer(st.of.recv.sender, id, device_of(st.of.recv.sender), d);
}

// The message of `from` for the receive `to`: it moves now if the receive is posted.
[[gnu::noinline]] void EventLoop::offer_to_recv(SlotId from, SlotId to, int src, int dst) {
  Slot& st = slots_[to];
  if (st.of.recv.state == RecvState::Posted) return start_transfer(from, to, src, dst);
  st.of.recv = {RecvState::SendWaiting, from};
}

[[gnu::noinline]] void EventLoop::start_transfer(SlotId from, SlotId to, int src, int dst) {
  if (src != dst) return send(from, to, src, dst, op_of(from));
  satisfy(to, from, now_);
  release_successors(to, dst);
}

}  // namespace pipesim
