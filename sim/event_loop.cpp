// The event loop's run (sim/event_loop.hpp): its setup, the loop, compute ops starting on
// their device and finishing (the op's records, its weight versions, its memory), and the
// results (device statistics, the critical path), and the device thread's own work after an
// op (start_host_work). What an op's end hands on is in sim/event_loop_transfers.cpp.
#include "sim/event_loop.hpp"

#include <algorithm>
#include <variant>

#include "core/error.hpp"
#include "sim/critical_path.hpp"

namespace pipesim {
namespace {

// Equal for the dependency walk and the engine: everything but the name and the CSV cells
// (which only messages read, from the run's own schedule).
bool same_walk(const Schedule& a, const Schedule& b) {
  return a.num_devices == b.num_devices && a.num_stages == b.num_stages && a.num_pipelines == b.num_pipelines &&
         a.microbatches == b.microbatches && a.iterations == b.iterations &&
         a.blocking_grad_sync == b.blocking_grad_sync && a.weight_policy == b.weight_policy &&
         a.microbatch_split == b.microbatch_split && a.placement == b.placement && a.ops == b.ops;
}

const Schedule& checked(const Schedule& schedule) {
  check_schedule_shape(schedule);  // before the ops can be numbered
  return schedule;
}

// What the loop records for `observer`: op records for one that takes them or their totals
// (observer.hpp: the loop gives no totals, its ops of one kind may take different times).
std::uint8_t wanted(const SimObserver* observer) {
  if (!observer) return 0;
  const std::uint8_t wants = observer->wants();
  return static_cast<std::uint8_t>((wants & kOpTotals) ? (wants | kOpRecords) : wants);
}

}  // namespace

EventLoop::EventLoop(const Schedule& schedule, const CostModel& costs, SimObserver* observer,
                     const SimProgress* progress, const SharedHardware* hardware, EventLoopBuffers& buffers)
    : s_(schedule), costs_(costs), observer_(observer), wants_(wanted(observer)),
      progress_(progress && progress->report ? progress : nullptr),
      next_report_(progress_ ? std::max<std::uint64_t>(1, progress_->every) : kNever), scale_(scale_of(schedule)),
      between_ops_(costs.between_ops()),
      member_sums_(costs.collective_style() == CostModel::CollectiveStyle::MemberThreads),
      layout_(checked(schedule)),
      walked_(buffers.walked && same_walk(*buffers.walked, schedule)),
      ops_(walked_ ? buffers.ops.get(layout_.size()) : in_id_order(buffers.ops.get(layout_.size()))),
      versions_(schedule),
      slots_(walked_ ? SlotTable(buffers.slots.get(layout_.size()), buffers.filled.data(), buffers.links, layout_,
                                 problems_)
                     : SlotTable(buffers.slots.get(layout_.size()), schedule, layout_, ops_, problems_)) {
  if (!walked_) buffers.walked.reset();  // its ops are gone from buffers.ops
  init_state();  // throws for a schedule with problems, which is then not kept
  if (buffers.reuse_walks && !walked_ && layout_.size() > 0) {
    const Slot* slots = &slots_[SlotId{0}];
    buffers.filled.assign(slots, slots + layout_.size());
    buffers.links = slots_.links();
    buffers.walked = schedule;
  }
  if (hardware) {
    hardware->check(s_.num_devices);
    if (!hardware->shares_nothing()) sharing_.emplace(*hardware, s_.num_devices);
  }
}

void EventLoop::init_state() {
  const auto devices = static_cast<std::size_t>(s_.num_devices);
  if (!problems_.empty()) throw_problems();
  dev_.assign(devices, DeviceState{});
  for (std::size_t d = 0; d < devices; ++d) {
    dev_[d].size = layout_.length(static_cast<int>(d));
    dev_[d].base = layout_.id(static_cast<int>(d), 0);
  }
  result_.devices.assign(devices, DeviceStats{});
  if (s_.num_devices <= kDenseLinkDevices) link_free_.assign(devices * devices, 0);
  collectives_.assign(slots_.collectives().size(), CollectiveState{});
  result_.iteration_end.assign(static_cast<std::size_t>(std::max(1, s_.iterations)), 0);
}

SimResult EventLoop::run() {
  for (int d = 0; d < s_.num_devices; ++d) try_start(d, 0);
  while (!queue_.empty()) {
    const TimedEvent e = queue_.pop();
    now_ = e.time;
    std::visit([this](const auto& event) { handle(event); }, e.event);
  }
  check_complete();
  if (progress_) progress_->report(ops_done_);
  result_.events = queue_.pushed();
  result_.critical_path = critical_path();
  for (std::size_t d = 0; d < dev_.size(); ++d)
    result_.devices[d] = device_stats(dev_[d].busy_time, dev_[d].first_start, dev_[d].last_end, dev_[d].memory,
                                      versions_.peak_versions_held(static_cast<int>(d)));
  result_.staleness = versions_.staleness();
  result_.shared = sharing_.has_value();
  return std::move(result_);
}

[[gnu::noinline]] void EventLoop::start_ops(int d, Tick now) {
  DeviceState& dev = dev_[static_cast<std::size_t>(d)];
  while (!dev.busy && !dev.held && dev.next < dev.size) {
    const SlotId id = slot_at(dev.base, dev.next);
    Slot& st = slots_[id];
    if (st.pending > 0 && !is_recv(st.kind)) return;  // a receive is posted before its message arrives
    const Op& op = op_of(id);
    ++dev.next;
    // The device reaches the op: the last of its constraints (Slot::released). Which one
    // let it start last: its device's previous compute op, or its latest input.
    if (dev.last_compute != kNoSlot && dev.free_at >= st.released) st.cause = dev.last_compute;
    st.released = now;
    if (!is_compute(op.kind)) [[unlikely]] {
      if (op.kind != OpKind::GradSync) {
        run_comm(id, d);
      } else if (const Tick work = costs_.grad_sync_work(op, scale_) -
                                   (member_sums_ ? costs_.grad_sync_work_after(op, scale_) : 0);
                 work > 0) {
        start_sync_work(id, d, work, now);  // joins the collective when it ends
      } else {
        join_collective(id, d, now);
      }
      continue;
    }
    if (is_microbatch_op(op.kind)) {
      auto& v = st.of.microbatch;
      v.version = versions_.start(op, v.forward_version);
      if (op.kind == OpKind::F) v.forward_version = v.version;
    }
    const Tick dur = costs_.compute_time(op, scale_);
    PIPESIM_ASSERT(dur >= 0);
    dev.busy = true;
    if (!dev.started) {
      dev.first_start = now;
      dev.started = true;
    }
    if (op.kind == OpKind::F) change_memory(d, op, now);
    if (sharing_ && sharing_->shares_compute(d)) [[unlikely]] {
      sharing_->start_compute(d, op.kind, dur, now, static_cast<std::uint32_t>(id));
      push_changes();
    } else {
      dev.busy_time = later(dev.busy_time, dur);
      queue_.push(later(now, dur), OpFinish{id});
    }
    // Performance: when this op ends, each successor's slot is updated, and soon after
    // the successor starts and reads its op. Ask for those lines now; they arrive long
    // before the op ends. (Without the op's line the event loop went from 50 to 57 ns/op
    // between m = 1024 and 8192 at p = 64; with it, flat.) Written out here, not in a
    // helper: GCC deems a function of prefetches pure and drops the call.
    if (st.successors > 0) __builtin_prefetch(&slots_[st.next[0]]), __builtin_prefetch(&op_of(st.next[0]));
    if (st.successors > 1) __builtin_prefetch(&slots_[st.next[1]]), __builtin_prefetch(&op_of(st.next[1]));
  }
}

// The device's activation memory (sim/activation_account.hpp), and its record.
[[gnu::always_inline]] inline void EventLoop::change_memory(int d, const Op& op, Tick now) {
  ActivationAccount& memory = dev_[static_cast<std::size_t>(d)].memory;
  if (!memory.change(d, op.kind, costs_.activation(op, scale_))) return;
  if (wants_ & kMemoryRecords) observer_->on_memory(MemoryRecord{d, now, memory.bytes, memory.count});
}

// Performance: inlined into the event loop; called out of line it cost 5 % more
// instructions per op (callgrind). The shared path calls it through finish_compute.
[[gnu::always_inline]] inline void EventLoop::handle(const OpFinish& e) {
  const SlotId id = e.op;
  const int d = device_of(id);
  DeviceState& dev = dev_[static_cast<std::size_t>(d)];
  const Slot& st = slots_[id];
  const Op& op = op_of(id);
  dev.busy = false;
  dev.free_at = now_;
  dev.last_compute = id;
  dev.last_end = now_;
  result_.makespan = std::max(result_.makespan, now_);
  std::int32_t version = -1;
  if (is_microbatch_op(op.kind)) {
    version = st.of.microbatch.version;
    if (op.kind != OpKind::F) change_memory(d, op, now_);
    auto& end = result_.iteration_end;
    const auto t = static_cast<std::size_t>(s_.iteration_of(op.microbatch));
    if (t >= end.size()) end.resize(t + 1, 0);
    end[t] = std::max(end[t], now_);
  }
  if (is_microbatch_op(op.kind) || op.kind == OpKind::OptStep)
    versions_.end(op, st.of.microbatch.version, st.of.microbatch.forward_version, d);
  if (wants_ & kOpRecords) {
    // A device runs one compute op at a time and starts nothing while it does: the op
    // ending is the last one it started (no division, as ref_of needs).
    PIPESIM_ASSERT(slot_at(dev.base, dev.next - 1) == id);
    observer_->on_op(OpRecord{OpRef{d, static_cast<std::int32_t>(dev.next - 1)}, op, st.released, now_, version});
  }
  if (++ops_done_ >= next_report_) [[unlikely]] report_progress();
  release_successors(id, d);
  if (dev.host_work > 0 || between_ops_ > 0) [[unlikely]] {
    dev.host_work = later(dev.host_work, between_ops_);
    return start_host_work(d);
  }
  try_start(d, now_);
}

[[gnu::noinline]] void EventLoop::finish_compute(SlotId id) { handle(OpFinish{id}); }

// The device thread's own work after an op (DeviceState::host_work): it holds the device as a
// compute op does, on its pool's cores where it has one (as a SEND, at factor 1), but it is no
// op's busy time and ends in no op record.
[[gnu::noinline]] void EventLoop::start_host_work(int d) {
  DeviceState& dev = dev_[static_cast<std::size_t>(d)];
  const Tick work = dev.host_work;
  dev.host_work = 0;
  dev.busy = true;
  dev.host_since = now_;
  if (sharing_ && sharing_->shares_compute(d)) {
    sharing_->start_compute(d, OpKind::SendF, work, now_, kHostWorkPayload | static_cast<std::uint32_t>(d));
    push_changes();
  } else {
    queue_.push(later(now_, work), HostWorkFinish{d});
  }
}

void EventLoop::handle(const HostWorkFinish& e) { finish_host_work(e.device); }

[[gnu::noinline]] void EventLoop::finish_host_work(int d) {
  DeviceState& dev = dev_[static_cast<std::size_t>(d)];
  dev.busy = false;
  dev.free_at = now_;
  if (dev.waking) [[unlikely]] {  // woken after a sum (copy_sums_in): no work of its own yet
    dev.waking = false;
    if (dev.host_work > 0) return start_host_work(d);
    return try_start(d, now_);
  }
  if (wants_ & kHostWorkRecords) observer_->on_host_work(HostWorkRecord{d, dev.host_since, now_});
  if (dev.summing >= 0) [[unlikely]] {  // the sum is made: the collective ends (and starts the copies in)
    const auto c = static_cast<std::uint32_t>(dev.summing);
    dev.summing = -1;
    return handle(CollectiveFinish{c});
  }
  if (dev.host_work > 0) [[unlikely]] return start_host_work(d);  // work that came meanwhile (a copy in)
  try_start(d, now_);
}

[[gnu::noinline]] void EventLoop::report_progress() {
  progress_->report(ops_done_);
  next_report_ = ops_done_ + std::max<std::uint64_t>(1, progress_->every);
}

std::vector<OpRef> EventLoop::critical_path() const {
  return pipesim::critical_path(
      dev_, kNoSlot, [](const DeviceState& dev) { return dev.last_compute; },
      [](const DeviceState& dev) { return dev.last_end; }, [this](SlotId id) { return slots_[id].cause; },
      [this](SlotId id) { return ref_of(id); }, layout_.size());
}

}  // namespace pipesim
