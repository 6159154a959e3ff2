// Shared hardware in the event loop (sim/event_loop.hpp; the description in
// sim/resources.hpp, the rates in sim/sharing.hpp): a compute op of a device in a pool, a
// transfer on a shared link and (with overlap) a collective are activities of a Sharing,
// whose ends are not known when they start. Every start and finish may change the rates of
// the activities it shares something with; for each one whose end moved, the loop gets an
// ActivityFinish at its new end, and drops the ones whose generation is no longer current.
// Without sharing none of this runs (the fast path).
#include "sim/event_loop.hpp"

#include "core/error.hpp"

namespace pipesim {

[[gnu::noinline]] void EventLoop::send_shared(const WireTransfer& t, std::size_t pair) {
  std::uint32_t index = 0;
  if (free_wire_.empty()) {
    index = static_cast<std::uint32_t>(wire_.size());
    wire_.push_back(t);
  } else {
    index = free_wire_.back();
    free_wire_.pop_back();
    wire_[index] = t;
  }
  SharedLink& link = shared_links_[pair];
  if (link.busy) return link.waiting.push_back(index);
  link.busy = true;
  put_on_wire(index);
}

[[gnu::noinline]] void EventLoop::put_on_wire(std::uint32_t index) {
  WireTransfer& t = wire_[index];
  t.link_start = now_;
  sharing_->start_transfer(t.src, t.dst, t.occupancy, now_, index);
  push_changes();
}

[[gnu::noinline]] void EventLoop::push_changes() {
  for (const Sharing::Finish& c : sharing_->changes()) queue_.push(c.at, ActivityFinish{c.activity, c.generation});
  sharing_->clear_changes();
}

[[gnu::noinline]] void EventLoop::handle(const ActivityFinish& e) {
  if (!sharing_->current(e.activity, e.generation)) return;  // stale: its rate changed since
  const Sharing::Kind kind = sharing_->kind(e.activity);
  const std::uint32_t payload = sharing_->payload(e.activity);
  const Tick running_since = sharing_->running_since(e.activity);
  const std::uint32_t core_from = sharing_->core_from(e.activity);
  sharing_->finish(e.activity, now_);
  push_changes();
  if (kind == Sharing::Kind::Compute) {
    // The op ran from when it had a core (a queued pool: after waiting for one) to now.
    if (payload & kHostWorkPayload) return finish_host_work(static_cast<int>(payload & ~kHostWorkPayload));
    const SlotId id{payload};
    if (op_of(id).kind == OpKind::GradSync) return finish_sync_work(id, device_of(id));  // no op's busy time
    // An op that waited for a core was held up last by the op that gave it the core. Not by a
    // GradSync's work: that member's cause becomes its collective's last arrival, which may
    // come after this op (the critical path would loop); the op keeps its own cause then.
    if (core_from != ~0u && !(core_from & kHostWorkPayload) && running_since > slots_[id].released &&
        op_of(SlotId{core_from}).kind != OpKind::GradSync)
      slots_[id].cause = SlotId{core_from};
    slots_[id].released = running_since;
    DeviceState& dev = dev_[static_cast<std::size_t>(device_of(id))];
    dev.busy_time = later(dev.busy_time, now_ - running_since);
    return finish_compute(id);
  }
  if (kind == Sharing::Kind::Collective) {
    for (SlotId m : slots_.collectives()[payload]) dev_[static_cast<std::size_t>(device_of(m))].comm_busy = false;
    handle(CollectiveFinish{payload});
    return start_ready_collectives();
  }
  const WireTransfer t = wire_[payload];
  free_wire_.push_back(payload);
  std::uint32_t record = TransferArrive::kNoRecord;
  const Tick arrival = later(now_, t.latency);
  if (wants_ & kTransferRecords)
    record = keep_record(TransferRecord{ref_of(t.from), ref_of(t.to), t.ready, t.link_start, now_, arrival, t.bytes});
  queue_.push(arrival, TransferArrive{t.from, t.to, record});
  SharedLink& link = shared_links_[link_index(t.src, t.dst)];
  if (link.waiting.empty()) {
    link.busy = false;
  } else {
    const std::uint32_t next = link.waiting.front();
    link.waiting.pop_front();
    put_on_wire(next);
  }
}

}  // namespace pipesim
