// GradSync collectives in the event loop (sim/event_loop.hpp): a member first does its own
// work where the cost model has some (grad_sync_work: start_sync_work,
// handle(SyncWorkFinish)), then joins; a collective starts when every participant has
// joined and the participants' communication streams are free, runs for the cost model's
// all-reduce time, and then ends every participant at
// once (their op records, their successors). Where the cost model says the members' threads
// run it (CollectiveStyle::MemberThreads), the last to arrive makes the sum on its device
// instead (start_member_sum), and the members' copies in follow it; an arriving member waits
// for the end of its tick (end_tick), so that which one sums does not depend on the order of
// one time's events. It does not stall a device unless the
// schedule says blocking_grad_sync (start_ops). On shared hardware with overlap the
// streams are FIFOs of activities (start_ready_collectives).
#include "sim/event_loop.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace pipesim {

// A GradSync member's own work (CostModel::grad_sync_work): it holds the device as a compute
// op does, on its pool's cores where it has one, but it is no op's busy time and ends in no
// op record; at its end the member joins the collective.
[[gnu::noinline]] void EventLoop::start_sync_work(SlotId id, int d, Tick work, Tick now) {
  DeviceState& dev = dev_[static_cast<std::size_t>(d)];
  dev.busy = true;
  if (sharing_ && sharing_->shares_compute(d)) {
    sharing_->start_compute(d, OpKind::GradSync, work, now, static_cast<std::uint32_t>(id));
    push_changes();
  } else {
    queue_.push(later(now, work), SyncWorkFinish{id});
  }
}

void EventLoop::handle(const SyncWorkFinish& e) { finish_sync_work(e.sync, device_of(e.sync)); }

[[gnu::noinline]] void EventLoop::finish_sync_work(SlotId id, int d) {
  DeviceState& dev = dev_[static_cast<std::size_t>(d)];
  dev.busy = false;
  dev.free_at = now_;
  join_collective(id, d, now_);
  try_start(d, now_);
}

void EventLoop::join_collective(SlotId id, int d, Tick now) {
  DeviceState& dev = dev_[static_cast<std::size_t>(d)];
  if (member_sums_) [[unlikely]] {
    dev.held |= kPaused;
    if (paused_.empty()) queue_.push(now, TickEnd{});
    paused_.push_back(d);
  }
  arrive_collective(id, now);
  if (s_.blocking_grad_sync) dev.held |= kBlocked;
}

void EventLoop::arrive_collective(SlotId id, Tick now) {
  const auto c = static_cast<std::size_t>(slots_[id].of.collective);
  CollectiveState& st = collectives_[c];
  ++st.arrived;
  // The last to arrive; with MemberThreads, of those arriving at one tick, the one on the
  // highest device (the one that sums: end_tick).
  if (!member_sums_ || st.last_arrival == kNoSlot || now > st.start || device_of(id) > device_of(st.last_arrival))
    st.last_arrival = id;
  st.start = std::max(st.start, now);
  const auto& members = slots_.collectives()[c];
  if (st.arrived < static_cast<int>(members.size())) return;
  // Every member waited for the last to arrive (the critical path's cause), however it runs.
  for (SlotId m : members)
    if (m != st.last_arrival) slots_[m].cause = st.last_arrival;
  if (member_sums_) [[unlikely]]
    return completed_.push_back(static_cast<std::uint32_t>(c));
  if (sharing_ && sharing_->shares_collectives()) [[unlikely]] {
    ready_collectives_.push_back(static_cast<std::uint32_t>(c));
    return start_ready_collectives();
  }
  // Everyone is here: run on the participants' comm streams once all are free.
  for (SlotId m : members) st.start = std::max(st.start, dev_[static_cast<std::size_t>(device_of(m))].comm_free_at);
  const Op op = op_of(id);
  const std::int64_t bytes = costs_.grad_bytes(op, scale_);
  const Tick dur = costs_.allreduce_time(static_cast<int>(members.size()), bytes);
  PIPESIM_ASSERT(dur >= 0);
  for (SlotId m : members) dev_[static_cast<std::size_t>(device_of(m))].comm_free_at = later(st.start, dur);
  queue_.push(later(st.start, dur), CollectiveFinish{static_cast<std::uint32_t>(c)});
}

// CostModel::CollectiveStyle::MemberThreads (a CPU executor's GradSync, executor/worker.cpp):
// the member that arrives last adds the others' copies into its own on its device thread, for
// the cost model's allreduce time, as that device's host work (it holds the device, or its
// pool's cores, as a compute op does); when it ends the collective ends (finish_host_work),
// and each member then copies the sum back in (grad_sync_work_after) before its next op.
[[gnu::noinline]] void EventLoop::start_member_sum(std::uint32_t c) {
  CollectiveState& st = collectives_[c];
  const int d = device_of(st.last_arrival);
  DeviceState& dev = dev_[static_cast<std::size_t>(d)];
  PIPESIM_ASSERT(!dev.busy && dev.summing < 0);  // it has just arrived: its thread is free
  const auto& members = slots_.collectives()[c];
  const Tick dur = costs_.allreduce_time(static_cast<int>(members.size()), costs_.grad_bytes(op_of(st.last_arrival), scale_));
  PIPESIM_ASSERT(dur >= 0);
  dev.summing = static_cast<std::int32_t>(c);
  dev.host_work = later(dev.host_work, dur);
  start_host_work(d);
}

void EventLoop::handle(const TickEnd&) {
  if (!queue_.empty() && queue_.next_time() == now_) return queue_.push(now_, TickEnd{});  // after the rest
  end_tick();
}

[[gnu::noinline]] void EventLoop::end_tick() {
  // Each summer arrived since the last end of this tick (a device arrives at one collective in
  // that time: it starts nothing more before it), so its thread is free. The paused devices
  // move to restart_ (paused_ then collects those that arrive again as they start).
  std::sort(completed_.begin(), completed_.end());
  restart_.swap(paused_);
  paused_.clear();
  std::sort(restart_.begin(), restart_.end());
  for (int d : restart_) dev_[static_cast<std::size_t>(d)].held &= static_cast<std::uint8_t>(~kPaused);
  for (std::uint32_t c : completed_) start_member_sum(c);  // after its copy in, if one came (copy_sums_in)
  completed_.clear();
  for (int d : restart_) {
    const DeviceState& dev = dev_[static_cast<std::size_t>(d)];
    if (!dev.busy && dev.host_work > 0)
      start_host_work(d);
    else
      try_start(d, now_);
  }
}

// MemberThreads, the sum made: each member copies it in (grad_sync_work_after), now if its
// thread is free or after the op it runs. A member whose thread sleeps waiting for the sum is
// woken by the one that made it: as a message's receiver that slept (TransferCost: the
// summer's call, `wake`, is its work; the latency the sleeper's, on no core).
void EventLoop::copy_sums_in(std::uint32_t c) {
  const int summer = device_of(collectives_[c].last_arrival);
  DeviceState& s = dev_[static_cast<std::size_t>(summer)];
  for (SlotId m : slots_.collectives()[c]) {  // the sleepers are woken first, then the summer copies in
    const int d = device_of(m);
    if (d == summer) continue;
    DeviceState& dev = dev_[static_cast<std::size_t>(d)];
    dev.host_work = later(dev.host_work, costs_.grad_sync_work_after(op_of(m), scale_));
    if (dev.busy || (dev.held & kPaused)) continue;  // a paused one is awake and copies in at the tick's end (end_tick)
    const TransferCost wake = costs_.transfer(summer, d, 0);
    if (wake.latency_is_wake && wake.latency > 0 && dev.free_at < now_) {  // asleep: idle since before now
      s.host_work = later(s.host_work, wake.wake);
      dev.busy = dev.waking = true;
      queue_.push(later(now_, wake.latency), HostWorkFinish{d});
    } else if (dev.host_work > 0) {
      start_host_work(d);
    }
  }
  s.host_work = later(s.host_work, costs_.grad_sync_work_after(op_of(collectives_[c].last_arrival), scale_));
  if (!s.busy && s.host_work > 0) start_host_work(summer);
}

// Shared hardware with overlap: collectives are activities whose end is not known when
// they start, so each participant's communication stream is a FIFO: the ready ones start,
// in the order they became ready, once all their participants' streams are free; one that
// must wait holds its participants for it (nothing ready later overtakes it there).
[[gnu::noinline]] void EventLoop::start_ready_collectives() {
  std::vector<char> held(dev_.size(), 0);
  auto is_free = [&](SlotId m) {
    const auto d = static_cast<std::size_t>(device_of(m));
    return !dev_[d].comm_busy && !held[d];
  };
  for (auto it = ready_collectives_.begin(); it != ready_collectives_.end();) {
    const std::uint32_t c = *it;
    const auto& members = slots_.collectives()[c];
    if (!std::all_of(members.begin(), members.end(), is_free)) {
      for (SlotId m : members) held[static_cast<std::size_t>(device_of(m))] = 1;
      ++it;
      continue;
    }
    CollectiveState& st = collectives_[c];
    st.start = now_;
    std::vector<int> devices;
    for (SlotId m : members) {
      devices.push_back(device_of(m));
      dev_[static_cast<std::size_t>(device_of(m))].comm_busy = true;
    }
    const Tick dur = costs_.allreduce_time(static_cast<int>(members.size()), costs_.grad_bytes(op_of(members.front()), scale_));
    PIPESIM_ASSERT(dur >= 0);
    sharing_->start_collective(devices, dur, now_, c);
    push_changes();
    it = ready_collectives_.erase(it);
  }
}

void EventLoop::handle(const CollectiveFinish& e) {
  const std::uint32_t c = e.collective;
  const auto& members = slots_.collectives()[c];
  result_.makespan = std::max(result_.makespan, now_);
  if (wants_ & kCollectiveRecords) {
    CollectiveRecord r;
    for (SlotId m : members) r.participants.push_back(ref_of(m));
    r.start = collectives_[c].start;
    r.end = now_;
    r.bytes = costs_.grad_bytes(op_of(members.front()), scale_);
    observer_->on_collective(r);
  }
  if (wants_ & kOpRecords)
    for (SlotId m : members) observer_->on_op(OpRecord{ref_of(m), op_of(m), slots_[m].released, now_, -1});
  ops_done_ += members.size();
  for (SlotId m : members) {
    const int d = device_of(m);
    release_successors(m, d);
    dev_[static_cast<std::size_t>(d)].held &= static_cast<std::uint8_t>(~kBlocked);
  }
  if (member_sums_) [[unlikely]] copy_sums_in(c);
  for (SlotId m : members) try_start(device_of(m), now_);
}

}  // namespace pipesim
