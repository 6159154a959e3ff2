#include "sim/engine.hpp"

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>

#include "schedules/dependencies.hpp"
#include "core/error.hpp"
#include "schedules/op_numbering.hpp"
#include "schedules/op_text.hpp"
#include "sim/activation_account.hpp"
#include "sim/buffer.hpp"
#include "sim/event_queue.hpp"
#include "sim/ready_pass.hpp"
#include "sim/sharing.hpp"
#include "sim/slots.hpp"
#include "sim/versions.hpp"

namespace pipesim {
namespace {


// What a Simulator keeps between runs: the slots, and the schedule's ops in slot order.
// With reuse_walks, also the last schedule it walked, its slots as the walk filled them and
// the walk's links: a run of an equal schedule starts from copies of those.
struct Buffers {
  Buffer<Slot> slots;
  Buffer<Op> ops;
  bool reuse_walks = false;
  std::optional<Schedule> walked;
  std::vector<Slot> filled;
  SlotTable::Links links;
};

// Equal for the dependency walk and the engine: everything but the name and the CSV cells
// (which only messages read, from the run's own schedule).
bool same_walk(const Schedule& a, const Schedule& b) {
  return a.num_devices == b.num_devices && a.num_stages == b.num_stages && a.num_pipelines == b.num_pipelines &&
         a.microbatches == b.microbatches && a.iterations == b.iterations &&
         a.blocking_grad_sync == b.blocking_grad_sync && a.weight_policy == b.weight_policy &&
         a.microbatch_split == b.microbatch_split && a.placement == b.placement && a.ops == b.ops;
}

// One run of the engine. All per-op state lives in a SlotTable (sim/slots.hpp), filled
// straight from the dependency rules; the dependency graph (build_dependencies) is built
// only to explain a broken schedule or a deadlock.
class Run {
 public:
  Run(const Schedule& schedule, const CostModel& costs, SimObserver* observer, const SimProgress* progress,
      const SharedHardware* hardware, Buffers& buffers)
      : s_(schedule), costs_(costs), observer_(observer), wants_(observer ? observer->wants() : 0),
        progress_(progress && progress->report ? progress : nullptr),
        next_report_(progress_ ? std::max<std::uint64_t>(1, progress_->every) : kNever), scale_(scale_of(schedule)),
        layout_(checked(schedule), OpNumbering::Order::Interleaved),
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

  // The event loop: each event (sim/events.hpp) goes to its handler, handle(), at its time.
  SimResult run() {
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

 private:
  // Per device: where it is in its list, and its statistics (copied to SimResult at the end).
  struct DeviceState {
    std::uint32_t next = 0;      // index of the next op to start
    std::uint32_t size = 0;      // ops in its list
    OpId base = 0;               // its first op's id in layout_ (slot_at)
    bool busy = false;           // a compute op is running
    bool blocked = false;        // waiting on a blocking collective
    bool started = false;
    Tick free_at = 0;            // end of the last compute op
    SlotId last_compute = kNoSlot;  // for the critical path
    Tick comm_free_at = 0;       // the communication stream (collectives)
    bool comm_busy = false;      // shared hardware with overlap: a collective runs on it
    ActivationAccount memory;
    Tick busy_time = 0, first_start = 0, last_end = 0;
  };
  struct CollectiveState {
    int arrived = 0;
    Tick start = 0;
    SlotId last_arrival = kNoSlot;
  };

  int device_of(SlotId slot) const { return layout_.device_of(static_cast<OpId>(slot)); }
  // The directed link (src, dst) as an index: link_free_'s, and the shared links' key.
  std::size_t link_index(int src, int dst) const {
    return static_cast<std::size_t>(src) * static_cast<std::size_t>(s_.num_devices) + static_cast<std::size_t>(dst);
  }
  OpRef ref_of(SlotId slot) const {
    const int d = device_of(slot);
    return OpRef{d, static_cast<int>(layout_.index_of(static_cast<OpId>(slot), d))};
  }
  // The slot of op `index` of the device whose first op is `base`.
  SlotId slot_at(OpId base, std::uint32_t index) const { return SlotId{layout_.id_from(base, index)}; }
  const Op& op_of(SlotId slot) const { return ops_[at(slot)]; }
  const Op* in_id_order(Op* ops) const {
    layout_.copy_in_id_order(s_, ops);
    return ops;
  }

  static const Schedule& checked(const Schedule& schedule) {
    check_schedule_shape(schedule);  // before the ops can be numbered
    return schedule;
  }

  void init_state() {
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

  // Starts as many ops on device d as its order and dependencies allow at time now_.
  // Performance: about half the calls find the device busy or its next op waiting; that
  // test is inline, the loop is not.
  void try_start(int d, Tick now) {
    const DeviceState& dev = dev_[static_cast<std::size_t>(d)];
    if (dev.busy || dev.blocked || dev.next >= dev.size) return;
    if (const Slot& next = slots_[slot_at(dev.base, dev.next)]; next.pending > 0 && !is_recv(next.kind)) return;
    start_ops(d, now);
  }
  [[gnu::noinline]] void start_ops(int d, Tick now) {
    DeviceState& dev = dev_[static_cast<std::size_t>(d)];
    while (!dev.busy && !dev.blocked && dev.next < dev.size) {
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
        if (op.kind == OpKind::GradSync) {
          arrive_collective(id, now);
          if (s_.blocking_grad_sync) dev.blocked = true;
        } else {
          run_comm(id, d);
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

  // A send or a receive takes no device time and does not stop its device. A send is
  // posted the moment the device reaches it, a receive likewise; the message moves (queued
  // on the link like any other transfer) once both are, and the receive is done when it
  // has arrived: then the op that uses it may start. A receive's slot keeps what it knows
  // in Slot::of.recv.
  [[gnu::noinline]] void run_comm(SlotId id, int d) {
    if (wants_ & kOpRecords) observer_->on_op(OpRecord{ref_of(id), op_of(id), now_, now_, -1});
    ++ops_done_;
    Slot& st = slots_[id];
    if (!is_recv(st.kind)) return release_successors(id, d);
    const bool waiting = st.of.recv.state == RecvState::SendWaiting;
    st.of.recv.state = RecvState::Posted;
    if (waiting) start_transfer(st.of.recv.sender, id, device_of(st.of.recv.sender), d);
  }
  // The message of `from` for the receive `to`: it moves now if the receive is posted.
  [[gnu::noinline]] void offer_to_recv(SlotId from, SlotId to, int src, int dst) {
    Slot& st = slots_[to];
    if (st.of.recv.state == RecvState::Posted) return start_transfer(from, to, src, dst);
    st.of.recv = {RecvState::SendWaiting, from};
  }
  [[gnu::noinline]] void start_transfer(SlotId from, SlotId to, int src, int dst) {
    if (src != dst) return send(from, to, src, dst, op_of(from));
    satisfy(to, from, now_);
    release_successors(to, dst);
  }

  // The device's activation memory (sim/activation_account.hpp), and its record.
  [[gnu::always_inline]] void change_memory(int d, const Op& op, Tick now) {
    ActivationAccount& memory = dev_[static_cast<std::size_t>(d)].memory;
    if (!memory.change(d, op.kind, costs_.activation(op, scale_))) return;
    if (wants_ & kMemoryRecords) observer_->on_memory(MemoryRecord{d, now, memory.bytes, memory.count});
  }

  // Performance: inlined into the event loop (and, a second copy, into the shared path's
  // handler); called out of line it cost 5 % more instructions per op (callgrind).
  [[gnu::always_inline]] void handle(const OpFinish& e) {
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
    try_start(d, now_);
  }
  [[gnu::noinline]] void report_progress() {
    progress_->report(ops_done_);
    next_report_ = ops_done_ + std::max<std::uint64_t>(1, progress_->every);
  }

  void release_successors(SlotId id, int d) {
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

  // What a message carries: a send's is that of the op whose result it sends.
  static Op message_of(const Op& producer) {
    if (!is_send(producer.kind)) return producer;
    return make_op(is_forward_comm(producer.kind) ? OpKind::F : OpKind::B, producer.stage, producer.microbatch,
                   producer.pipeline);
  }

  // A message on link (src, dst): FIFO behind earlier transfers for its occupancy, then
  // the latency, which does not hold the link. Performance: inlined into
  // release_successors, also now that the receives call it too.
  [[gnu::always_inline]] void send(SlotId from, SlotId to, int src, int dst, const Op& producer) {
    const std::int64_t bytes =
        is_send(producer.kind) ? costs_.message_bytes(message_of(producer), scale_) : costs_.message_bytes(producer, scale_);
    const TransferCost cost = costs_.transfer(src, dst, bytes);
    PIPESIM_ASSERT(cost.occupancy >= 0 && cost.latency >= 0);
    const std::size_t pair = link_index(src, dst);
    if (sharing_ && sharing_->shares_link(src, dst)) [[unlikely]]
      return send_shared(WireTransfer{from, to, src, dst, now_, 0, cost.occupancy, cost.latency, bytes}, pair);
    Tick& link = link_free_.empty() ? sparse_link_free_[pair] : link_free_[pair];
    const Tick link_start = std::max(now_, link);
    const Tick link_end = later(link_start, cost.occupancy);
    const Tick arrival = later(link_end, cost.latency);
    link = link_end;
    std::uint32_t record = TransferArrive::kNoRecord;
    if (wants_ & kTransferRecords) record = keep_record(TransferRecord{ref_of(from), ref_of(to), now_, link_start, link_end, arrival, bytes});
    queue_.push(arrival, TransferArrive{from, to, record});
  }
  // A transfer's record, kept until it arrives (for the observer): its index in in_flight_.
  [[gnu::noinline]] std::uint32_t keep_record(const TransferRecord& r) {
    if (free_records_.empty()) {
      in_flight_.push_back(r);
      return static_cast<std::uint32_t>(in_flight_.size() - 1);
    }
    const std::uint32_t i = free_records_.back();
    free_records_.pop_back();
    in_flight_[i] = r;
    return i;
  }

  // A transfer on a shared link (Sharing::shares_link): FIFO behind the link's earlier
  // transfers, then on the wire as an activity whose rate the NICs it crosses (and the
  // compute it overlaps) decide; its latency follows once its last byte is out.
  struct WireTransfer {
    SlotId from, to;
    int src, dst;
    Tick ready, link_start;
    Tick occupancy, latency;
    std::int64_t bytes;
  };
  struct SharedLink {
    bool busy = false;
    std::deque<std::uint32_t> waiting;  // indices into wire_
  };
  [[gnu::noinline]] void send_shared(const WireTransfer& t, std::size_t pair) {
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
  [[gnu::noinline]] void put_on_wire(std::uint32_t index) {
    WireTransfer& t = wire_[index];
    t.link_start = now_;
    sharing_->start_transfer(t.src, t.dst, t.occupancy, now_, index);
    push_changes();
  }
  [[gnu::noinline]] void push_changes() {
    for (const Sharing::Finish& c : sharing_->changes()) queue_.push(c.at, ActivityFinish{c.activity, c.generation});
    sharing_->clear_changes();
  }

  [[gnu::noinline]] void handle(const ActivityFinish& e) {
    if (!sharing_->current(e.activity, e.generation)) return;  // stale: its rate changed since
    const Sharing::Kind kind = sharing_->kind(e.activity);
    const std::uint32_t payload = sharing_->payload(e.activity);
    const Tick running_since = sharing_->running_since(e.activity);
    const std::uint32_t core_from = sharing_->core_from(e.activity);
    sharing_->finish(e.activity, now_);
    push_changes();
    if (kind == Sharing::Kind::Compute) {
      // The op ran from when it had a core (a queued pool: after waiting for one) to now.
      const SlotId id{payload};
      // An op that waited for a core was held up last by the op that gave it the core.
      if (core_from != ~0u && running_since > slots_[id].released) slots_[id].cause = SlotId{core_from};
      slots_[id].released = running_since;
      DeviceState& dev = dev_[static_cast<std::size_t>(device_of(id))];
      dev.busy_time = later(dev.busy_time, now_ - running_since);
      return handle(OpFinish{id});
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

  void handle(const TransferArrive& e) {
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

  void satisfy(SlotId to, SlotId from, Tick when) {
    Slot& st = slots_[to];
    PIPESIM_ASSERT(st.pending > 0);
    --st.pending;
    if (st.cause == kNoSlot || when > st.released) {
      st.released = when;
      st.cause = from;
    }
  }

  void arrive_collective(SlotId id, Tick now) {
    const auto c = static_cast<std::size_t>(slots_[id].of.collective);
    CollectiveState& st = collectives_[c];
    ++st.arrived;
    st.start = std::max(st.start, now);
    st.last_arrival = id;
    const auto& members = slots_.collectives()[c];
    if (st.arrived < static_cast<int>(members.size())) return;
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
    for (SlotId m : members) {
      dev_[static_cast<std::size_t>(device_of(m))].comm_free_at = later(st.start, dur);
      slots_[m].cause = st.last_arrival == m ? slots_[m].cause : st.last_arrival;
    }
    queue_.push(later(st.start, dur), CollectiveFinish{static_cast<std::uint32_t>(c)});
  }

  // Shared hardware with overlap: collectives are activities whose end is not known when
  // they start, so each participant's communication stream is a FIFO: the ready ones start,
  // in the order they became ready, once all their participants' streams are free; one that
  // must wait holds its participants for it (nothing ready later overtakes it there).
  [[gnu::noinline]] void start_ready_collectives() {
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
        slots_[m].cause = st.last_arrival == m ? slots_[m].cause : st.last_arrival;
      }
      const Tick dur = costs_.allreduce_time(static_cast<int>(members.size()), costs_.grad_bytes(op_of(members.front()), scale_));
      PIPESIM_ASSERT(dur >= 0);
      sharing_->start_collective(devices, dur, now_, c);
      push_changes();
      it = ready_collectives_.erase(it);
    }
  }

  void handle(const CollectiveFinish& e) {
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
      dev_[static_cast<std::size_t>(d)].blocked = false;
    }
    for (SlotId m : members) try_start(device_of(m), now_);
  }

  // Everything ran, or the schedule deadlocked: then say who waits on whom.
  void check_complete() const {
    for (const DeviceState& dev : dev_)
      if (dev.next < dev.size || dev.blocked) explain_deadlock();
  }
  [[noreturn]] void explain_deadlock() const {
    const DependencyGraph g = dependencies(s_);
    // Has the op with graph id `id` started? Each device starts its ops in list order.
    auto started = [&](OpId id) {
      return static_cast<std::uint32_t>(g.index_of(id)) < dev_[static_cast<std::size_t>(g.device_of(id))].next;
    };
    std::string waits;
    int stuck = 0;
    for (int d = 0; d < s_.num_devices; ++d) {
      const DeviceState& dev = dev_[static_cast<std::size_t>(d)];
      const auto& list = s_.ops[static_cast<std::size_t>(d)];
      if (dev.next >= list.size() && !dev.blocked) continue;
      if (++stuck > 8) continue;
      const std::size_t at = dev.blocked ? dev.next - 1 : dev.next;
      const OpId id = g.id_of(d, static_cast<int>(at));
      waits += (waits.empty() ? "" : "; ") + std::string("device ") + std::to_string(d) + " waits at " +
               to_string(list[at]) + " for ";
      std::string on;
      auto waiting_on = [&](OpId p) {
        const int pd = g.device_of(p);
        on += (on.empty() ? "" : ", ") + to_string(s_.ops[static_cast<std::size_t>(pd)][static_cast<std::size_t>(g.index_of(p))]) +
              " (device " + std::to_string(pd) + ")";
      };
      if (g.collective_of[id] >= 0) {
        for (OpId m : g.collectives[static_cast<std::size_t>(g.collective_of[id])])
          if (!started(m)) waiting_on(m);
      }
      for (OpId k = g.pred_begin[id]; k < g.pred_begin[id + 1]; ++k) {
        const OpId p = g.preds[k];
        if (!started(p)) {
          waiting_on(p);
        } else if (const Op& pop = s_.ops[static_cast<std::size_t>(g.device_of(p))][static_cast<std::size_t>(g.index_of(p))];
                   is_recv(pop.kind) && slots_[SlotId{layout_.id(g.device_of(p), static_cast<std::uint32_t>(g.index_of(p)))}].pending > 0) {
          // Posted, but its message never came: say what it waits for.
          waiting_on(p);
          for (OpId j = g.pred_begin[p]; j < g.pred_begin[p + 1]; ++j)
            if (!started(g.preds[j])) on += " which waits for " + to_string(s_.ops[static_cast<std::size_t>(g.device_of(g.preds[j]))][static_cast<std::size_t>(g.index_of(g.preds[j]))]) + " (device " + std::to_string(g.device_of(g.preds[j])) + ")";
        }
      }
      waits += on.empty() ? "an op that never finishes" : on;
    }
    PIPESIM_ASSERT(stuck > 0);
    throw InputError("deadlock: " + std::to_string(stuck) + " device(s) cannot go on: " + waits +
                     (stuck > 8 ? "; ..." : ""));
  }

  std::vector<OpRef> critical_path() const {
    SlotId last = kNoSlot;
    Tick best = -1;
    for (const DeviceState& dev : dev_) {
      if (dev.last_compute != kNoSlot && dev.last_end > best) {
        best = dev.last_end;
        last = dev.last_compute;
      }
    }
    std::vector<OpRef> path;
    for (SlotId id = last; id != kNoSlot; id = slots_[id].cause) {
      path.push_back(ref_of(id));
      PIPESIM_ASSERT(path.size() <= layout_.size());
    }
    std::reverse(path.begin(), path.end());
    return path;
  }

  static DependencyGraph dependencies(const Schedule& schedule) {
    std::vector<DependencyProblem> problems;
    DependencyGraph g = build_dependencies(schedule, problems);
    if (!problems.empty()) throw InputError(describe_problems(problems));
    return g;
  }
  // The walk found problems: report them as build_dependencies orders them (graph order,
  // which decides which of two duplicates is named first).
  [[noreturn]] void throw_problems() const {
    dependencies(s_);
    assert_fail("build_dependencies finds the problems the walk found", __FILE__, __LINE__);
  }

  static std::string describe_problems(const std::vector<DependencyProblem>& problems) {
    std::string msg = "schedule is not runnable: ";
    for (std::size_t i = 0; i < problems.size() && i < 5; ++i)
      msg += (i ? "; " : "") + std::string("device ") + std::to_string(problems[i].device) + " op " +
             std::to_string(problems[i].index) + ": " + problems[i].message;
    if (problems.size() > 5) msg += "; and " + std::to_string(problems.size() - 5) + " more";
    return msg;
  }

  const Schedule& s_;
  const CostModel& costs_;
  SimObserver* observer_;
  const std::uint8_t wants_;  // the records observer_ reads (SimObserver::wants); 0 without one
  // Ops ended (on_op's count) and when to call progress_ next (never without one).
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};
  const SimProgress* progress_;
  std::uint64_t ops_done_ = 0;
  std::uint64_t next_report_;
  const OpScale scale_;
  const OpNumbering layout_;  // op -> slot
  const bool walked_;         // the Simulator's last walk was of an equal schedule: copied
  const Op* const ops_;       // the schedule's ops, by slot
  VersionTracker versions_;
  std::vector<DependencyProblem> problems_;  // found while filling the slots: not runnable
  SlotTable slots_;
  std::vector<DeviceState> dev_;
  // Free time of each directed link: a dense devices x devices table up to
  // kDenseLinkDevices devices (32 MiB); beyond, a map of the pairs that talk (a file with
  // 100000 device rows must not ask for 80 GB).
  static constexpr int kDenseLinkDevices = 2048;
  std::vector<Tick> link_free_;
  std::unordered_map<std::size_t, Tick> sparse_link_free_;
  std::vector<CollectiveState> collectives_;
  // Shared hardware (sim/resources.hpp), when something is shared: the activities, the
  // transfers on shared links and the links' FIFOs.
  std::optional<Sharing> sharing_;
  std::vector<WireTransfer> wire_;
  std::vector<std::uint32_t> free_wire_;
  std::unordered_map<std::size_t, SharedLink> shared_links_;
  std::vector<std::uint32_t> ready_collectives_;  // all arrived, waiting for comm streams
  // Records of transfers in flight, for the observer (TransferArrive::record); free ones.
  std::vector<TransferRecord> in_flight_;
  std::vector<std::uint32_t> free_records_;
  EventQueue queue_;
  Tick now_ = 0;
  SimResult result_;
};

}  // namespace

struct Simulator::Workspace {
  Buffers buffers;
  ReadyPassBuffers pass;
  bool always_event_loop = false;
  EnginePath last = EnginePath::EventLoop;
};

Simulator::Simulator(bool reuse_walks) : workspace_(std::make_unique<Workspace>()) {
  workspace_->buffers.reuse_walks = reuse_walks;
}
Simulator::~Simulator() = default;
Simulator::Simulator(Simulator&&) noexcept = default;
Simulator& Simulator::operator=(Simulator&&) noexcept = default;

SimResult Simulator::run(const Schedule& schedule, const CostModel& costs, SimObserver* observer,
                         const SimProgress* progress, const SharedHardware* hardware) {
  Workspace& w = *workspace_;
  if (!w.always_event_loop) {
    SimResult out;
    if (ready_pass(schedule, costs, observer, progress, hardware, w.pass, out)) {
      w.last = EnginePath::ReadyPass;
      return out;
    }
  }
  w.last = EnginePath::EventLoop;
  return Run(schedule, costs, observer, progress, hardware, w.buffers).run();
}

void Simulator::always_event_loop(bool on) { workspace_->always_event_loop = on; }
EnginePath Simulator::last_path() const { return workspace_->last; }

SimResult simulate(const Schedule& schedule, const CostModel& costs, SimObserver* observer,
                   const SimProgress* progress, const SharedHardware* hardware) {
  return Simulator().run(schedule, costs, observer, progress, hardware);
}

}  // namespace pipesim
