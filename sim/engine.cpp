#include "sim/engine.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>

#include "schedules/dependencies.hpp"
#include "schedules/error.hpp"
#include "schedules/op_text.hpp"
#include "sim/event_queue.hpp"
#include "sim/versions.hpp"

namespace pipesim {
namespace {

constexpr OpId kNone = std::numeric_limits<OpId>::max();

// One run of the engine. All per-op state lives in flat arrays indexed by OpId.
class Run {
 public:
  Run(const Schedule& schedule, const CostModel& costs, SimObserver* observer)
      : s_(schedule), costs_(costs), observer_(observer), scale_(scale_of(schedule)), g_(dependencies(schedule)),
        versions_(schedule) {
    init_state();
  }

  SimResult run() {
    for (int d = 0; d < s_.num_devices; ++d) try_start(d, 0);
    while (!queue_.empty()) {
      const Event e = queue_.pop();
      now_ = e.time;
      switch (e.type) {
        case EventType::OpFinish: finish_op(e.payload); break;
        case EventType::TransferArrive: arrive_transfer(e.payload); break;
        case EventType::CollectiveFinish: finish_collective(e.payload); break;
      }
    }
    check_complete();
    result_.events = queue_.pushed();
    result_.critical_path = critical_path();
    for (std::size_t d = 0; d < dev_.size(); ++d) {
      result_.devices[d].final_activation_bytes = dev_[d].act_bytes;
      result_.devices[d].peak_weight_versions = versions_.peak_versions_held(static_cast<int>(d));
    }
    result_.staleness = versions_.staleness();
    return std::move(result_);
  }

 private:
  struct DeviceState {
    std::size_t next = 0;        // index of the next op to start
    bool busy = false;           // a compute op is running
    bool blocked = false;        // waiting on a blocking collective
    bool started = false;
    Tick free_at = 0;            // end of the last compute op
    OpId last_compute = kNone;   // for the critical path
    Tick comm_free_at = 0;       // the communication stream (collectives)
    std::int64_t act_bytes = 0;
    std::int32_t act_count = 0;
  };
  struct CollectiveState {
    int arrived = 0;
    Tick start = 0;
    OpId last_arrival = kNone;
  };
  // Performance: what the event loop reads and writes per op lives in one 40-byte struct
  // per op, not in parallel arrays. Large schedules are far bigger than the caches, and
  // starting an op or delivering one of its inputs used to touch one cache line per array
  // (about seven, plus the dependency lists for its forward); now it is one or two.
  struct OpState {
    Tick ready_at = 0;               // arrival of its latest input ...
    Tick start = -1;                 // -1 until it starts
    OpId ready_by = kNone;           // ... and the op that sent it
    OpId cause = kNone;              // what let it start last (critical path)
    std::int32_t pending = 0;        // inputs not yet arrived
    std::int32_t version_used = -1;  // weight version of a micro-batch op
    std::int32_t device = 0;         // the device running it
    OpId forward = kNone;            // its forward, see find_forward()
  };

  // Performance: op ids are looked up several times per op (op_of, ref_of, successors on
  // which device), so each op's device is stored in its OpState instead of asking
  // DependencyGraph::device_of, an out-of-line search over the device offsets, each time.
  int device_of(OpId id) const { return op_[id].device; }
  int index_of(OpId id) const { return static_cast<int>(id - g_.device_offset[static_cast<std::size_t>(op_[id].device)]); }
  const Op& op_of(OpId id) const {
    return s_.ops[static_cast<std::size_t>(device_of(id))][static_cast<std::size_t>(index_of(id))];
  }
  OpRef ref_of(OpId id) const { return OpRef{device_of(id), index_of(id)}; }
  // The forward of a micro-batch op, for the version tracker: itself for F, the first
  // predecessor of B and I (dependencies.cpp lists it first), and for W that of its I, its
  // only predecessor. Worked out once per op in init_state.
  OpId find_forward(OpId id, const Op& op) const {
    if (op.kind == OpKind::F || !is_microbatch_op(op.kind)) return id;
    const OpId first = g_.preds[g_.pred_begin[id]];
    const OpId fwd = op.kind == OpKind::W ? g_.preds[g_.pred_begin[first]] : first;
    PIPESIM_ASSERT(op_of(fwd).kind == OpKind::F);
    return fwd;
  }

  void init_state() {
    const std::size_t n = g_.size();
    op_.assign(n, OpState{});
    for (std::size_t d = 0; d + 1 < g_.device_offset.size(); ++d)
      for (OpId id = g_.device_offset[d]; id < g_.device_offset[d + 1]; ++id) op_[id].device = static_cast<std::int32_t>(d);
    for (OpId id = 0; id < n; ++id) op_[id].forward = find_forward(id, op_of(id));
    // Successor lists (CSR) from the predecessor lists.
    succ_begin_.assign(n + 1, 0);
    for (OpId id = 0; id < n; ++id)
      for (OpId k = g_.pred_begin[id]; k < g_.pred_begin[id + 1]; ++k) ++succ_begin_[g_.preds[k] + 1];
    for (std::size_t i = 0; i < n; ++i) succ_begin_[i + 1] += succ_begin_[i];
    succs_.resize(g_.preds.size());
    std::vector<OpId> fill(succ_begin_.begin(), succ_begin_.end() - 1);
    for (OpId id = 0; id < n; ++id) {
      op_[id].pending = static_cast<std::int32_t>(g_.pred_begin[id + 1] - g_.pred_begin[id]);
      for (OpId k = g_.pred_begin[id]; k < g_.pred_begin[id + 1]; ++k) succs_[fill[g_.preds[k]]++] = id;
    }
    dev_.assign(static_cast<std::size_t>(s_.num_devices), DeviceState{});
    result_.devices.assign(static_cast<std::size_t>(s_.num_devices), DeviceStats{});
    if (s_.num_devices <= kDenseLinkDevices)
      link_free_.assign(static_cast<std::size_t>(s_.num_devices) * static_cast<std::size_t>(s_.num_devices), 0);
    collectives_.assign(g_.collectives.size(), CollectiveState{});
    result_.iteration_end.assign(static_cast<std::size_t>(std::max(1, s_.iterations)), 0);
  }

  // t + duration. Time is 64-bit nanoseconds (292 years); only absurd inputs (--fwd
  // 9000000000s and two micro-batches) get past that, and must not wrap around.
  static Tick later(Tick t, Tick duration) {
    Tick out = 0;
    if (__builtin_add_overflow(t, duration, &out))
      throw InputError("simulated time overflows 2^63 ns (292 years): the durations are too large");
    return out;
  }

  // Starts as many ops on device d as its order and dependencies allow at time now_.
  void try_start(int d, Tick now) {
    DeviceState& dev = dev_[static_cast<std::size_t>(d)];
    const auto& list = s_.ops[static_cast<std::size_t>(d)];
    while (!dev.busy && !dev.blocked && dev.next < list.size()) {
      const OpId id = g_.id_of(d, static_cast<int>(dev.next));
      OpState& st = op_[id];
      if (st.pending > 0) return;
      const Op& op = list[dev.next];
      ++dev.next;
      // Which constraint let this op start last: its device or its latest input.
      st.cause = (dev.last_compute != kNone && dev.free_at >= st.ready_at) ? dev.last_compute : st.ready_by;
      st.start = now;
      if (op.kind == OpKind::GradSync) {
        arrive_collective(id, now);
        if (s_.blocking_grad_sync) dev.blocked = true;
        continue;
      }
      if (is_microbatch_op(op.kind)) st.version_used = versions_.start(op, op_[st.forward].version_used);
      const Tick dur = costs_.compute_time(op, scale_);
      PIPESIM_ASSERT(dur >= 0);
      dev.busy = true;
      DeviceStats& stats = result_.devices[static_cast<std::size_t>(d)];
      if (!dev.started) {
        stats.first_start = now;
        dev.started = true;
      }
      stats.busy = later(stats.busy, dur);
      if (op.kind == OpKind::F) change_memory(d, op, now);
      queue_.push(later(now, dur), EventType::OpFinish, id);
      // Performance: when this op ends, each successor's OpState is updated, and that is
      // often its first touch since init_state (a B further on this device, an F on the
      // next one): on large schedules a miss to L3 or memory per op. Ask for those lines
      // now; they arrive long before the op ends. Written out here, not in a helper: GCC
      // deems a function of prefetches pure and drops the call.
      const OpId first = succ_begin_[id], end = succ_begin_[id + 1];
      if (first < end) __builtin_prefetch(&op_[succs_[first]]);
      if (first + 1 < end) __builtin_prefetch(&op_[succs_[first + 1]]);
    }
  }

  // F allocates its activation when it starts; B frees all of it, I part of it and W the
  // rest, when they end.
  void change_memory(int d, const Op& op, Tick now) {
    const ActivationCost a = costs_.activation(op, scale_);
    DeviceState& dev = dev_[static_cast<std::size_t>(d)];
    std::int64_t delta = 0;
    int count = 0;
    switch (op.kind) {
      case OpKind::F: delta = a.bytes; count = 1; break;
      case OpKind::B: delta = -a.bytes; count = -1; break;
      case OpKind::I: delta = -a.freed_by_input_grad; break;
      case OpKind::W: delta = -(a.bytes - a.freed_by_input_grad); count = -1; break;
      default: return;
    }
    // The micro-batch counts as held until nothing of it is left: after B, or after W.
    if (__builtin_add_overflow(dev.act_bytes, delta, &dev.act_bytes))
      throw InputError("activation memory of device " + std::to_string(d) + " overflows 8 EiB: the activation size is too large");
    dev.act_count += count;
    DeviceStats& stats = result_.devices[static_cast<std::size_t>(d)];
    stats.peak_activations = std::max(stats.peak_activations, dev.act_count);
    stats.peak_activation_bytes = std::max(stats.peak_activation_bytes, dev.act_bytes);
    if (observer_) observer_->on_memory(MemoryRecord{d, now, dev.act_bytes, dev.act_count});
  }

  void finish_op(OpId id) {
    const int d = device_of(id);
    DeviceState& dev = dev_[static_cast<std::size_t>(d)];
    const Op& op = op_of(id);
    dev.busy = false;
    dev.free_at = now_;
    dev.last_compute = id;
    result_.devices[static_cast<std::size_t>(d)].last_end = now_;
    result_.makespan = std::max(result_.makespan, now_);
    std::int32_t version = -1;
    if (is_microbatch_op(op.kind)) {
      version = op_[id].version_used;
      if (op.kind != OpKind::F) change_memory(d, op, now_);
      auto& end = result_.iteration_end;
      const auto t = static_cast<std::size_t>(s_.iteration_of(op.microbatch));
      if (t >= end.size()) end.resize(t + 1, 0);
      end[t] = std::max(end[t], now_);
    }
    if (is_microbatch_op(op.kind) || op.kind == OpKind::OptStep)
      versions_.end(op, op_[id].version_used, op_[op_[id].forward].version_used, d);
    if (observer_) observer_->on_op(OpRecord{ref_of(id), op, op_[id].start, now_, version});
    release_successors(id, d);
    try_start(d, now_);
  }

  void release_successors(OpId id, int d) {
    const Op& op = op_of(id);
    for (OpId k = succ_begin_[id]; k < succ_begin_[id + 1]; ++k) {
      const OpId to = succs_[k];
      const int dst = device_of(to);
      if (dst == d || op.kind == OpKind::GradSync) {
        satisfy(to, id, now_);
        if (dst != d) try_start(dst, now_);
        continue;
      }
      send(id, to, d, dst, op);
    }
  }

  // A message on link (src, dst): FIFO behind earlier transfers for its occupancy, then
  // the latency, which does not hold the link.
  void send(OpId from, OpId to, int src, int dst, const Op& producer) {
    const std::int64_t bytes = costs_.message_bytes(producer, scale_);
    const TransferCost cost = costs_.transfer(src, dst, bytes);
    PIPESIM_ASSERT(cost.occupancy >= 0 && cost.latency >= 0);
    const std::size_t pair = static_cast<std::size_t>(src) * static_cast<std::size_t>(s_.num_devices) + static_cast<std::size_t>(dst);
    Tick& link = link_free_.empty() ? sparse_link_free_[pair] : link_free_[pair];
    TransferRecord r;
    r.from = ref_of(from);
    r.to = ref_of(to);
    r.ready = now_;
    r.link_start = std::max(now_, link);
    r.link_end = later(r.link_start, cost.occupancy);
    r.arrival = later(r.link_end, cost.latency);
    r.bytes = bytes;
    link = r.link_end;
    std::uint32_t slot;
    if (free_slots_.empty()) {
      slot = static_cast<std::uint32_t>(in_flight_.size());
      in_flight_.push_back(r);
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
      in_flight_[slot] = r;
    }
    queue_.push(r.arrival, EventType::TransferArrive, slot);
  }

  void arrive_transfer(std::uint32_t slot) {
    const TransferRecord r = in_flight_[slot];
    free_slots_.push_back(slot);
    if (observer_) observer_->on_transfer(r);
    const OpId to = g_.id_of(r.to.device, r.to.index);
    satisfy(to, g_.id_of(r.from.device, r.from.index), now_);
    try_start(r.to.device, now_);
  }

  void satisfy(OpId to, OpId from, Tick at) {
    OpState& st = op_[to];
    PIPESIM_ASSERT(st.pending > 0);
    --st.pending;
    if (st.ready_by == kNone || at > st.ready_at) {
      st.ready_at = at;
      st.ready_by = from;
    }
  }

  void arrive_collective(OpId id, Tick now) {
    const auto c = static_cast<std::size_t>(g_.collective_of[id]);
    CollectiveState& st = collectives_[c];
    ++st.arrived;
    st.start = std::max(st.start, now);
    st.last_arrival = id;
    const auto& members = g_.collectives[c];
    if (st.arrived < static_cast<int>(members.size())) return;
    // Everyone is here: run on the participants' comm streams once all are free.
    for (OpId m : members) st.start = std::max(st.start, dev_[static_cast<std::size_t>(device_of(m))].comm_free_at);
    const Op& op = op_of(id);
    const std::int64_t bytes = costs_.grad_bytes(op, scale_);
    const Tick dur = costs_.allreduce_time(static_cast<int>(members.size()), bytes);
    PIPESIM_ASSERT(dur >= 0);
    for (OpId m : members) {
      dev_[static_cast<std::size_t>(device_of(m))].comm_free_at = later(st.start, dur);
      op_[m].cause = st.last_arrival == m ? op_[m].cause : st.last_arrival;
    }
    queue_.push(later(st.start, dur), EventType::CollectiveFinish, static_cast<std::uint32_t>(c));
  }

  void finish_collective(std::uint32_t c) {
    const auto& members = g_.collectives[c];
    result_.makespan = std::max(result_.makespan, now_);
    if (observer_) {
      CollectiveRecord r;
      for (OpId m : members) r.participants.push_back(ref_of(m));
      r.start = collectives_[c].start;
      r.end = now_;
      r.bytes = costs_.grad_bytes(op_of(members.front()), scale_);
      observer_->on_collective(r);
      for (OpId m : members) observer_->on_op(OpRecord{ref_of(m), op_of(m), op_[m].start, now_, -1});
    }
    for (OpId m : members) {
      const int d = device_of(m);
      release_successors(m, d);
      dev_[static_cast<std::size_t>(d)].blocked = false;
    }
    for (OpId m : members) try_start(device_of(m), now_);
  }

  // Everything ran, or the schedule deadlocked: then say who waits on whom.
  void check_complete() const {
    std::string waits;
    int stuck = 0;
    for (int d = 0; d < s_.num_devices; ++d) {
      const DeviceState& dev = dev_[static_cast<std::size_t>(d)];
      const auto& list = s_.ops[static_cast<std::size_t>(d)];
      if (dev.next >= list.size() && !dev.blocked) continue;
      if (++stuck > 8) continue;
      const std::size_t at = dev.blocked ? dev.next - 1 : dev.next;
      const OpId id = g_.id_of(d, static_cast<int>(at));
      waits += (waits.empty() ? "" : "; ") + std::string("device ") + std::to_string(d) + " waits at " +
               to_string(list[at]) + " for ";
      std::string on;
      if (g_.collective_of[id] >= 0) {
        for (OpId m : g_.collectives[static_cast<std::size_t>(g_.collective_of[id])])
          if (op_[m].start < 0) on += (on.empty() ? "" : ", ") + to_string(op_of(m)) + " (device " + std::to_string(device_of(m)) + ")";
      }
      for (OpId k = g_.pred_begin[id]; k < g_.pred_begin[id + 1]; ++k) {
        const OpId p = g_.preds[k];
        if (op_[p].start < 0) on += (on.empty() ? "" : ", ") + to_string(op_of(p)) + " (device " + std::to_string(device_of(p)) + ")";
      }
      waits += on.empty() ? "an op that never finishes" : on;
    }
    if (stuck > 0)
      throw InputError("deadlock: " + std::to_string(stuck) + " device(s) cannot go on: " + waits +
                       (stuck > 8 ? "; ..." : ""));
  }

  std::vector<OpRef> critical_path() const {
    OpId last = kNone;
    Tick best = -1;
    for (int d = 0; d < s_.num_devices; ++d) {
      const OpId id = dev_[static_cast<std::size_t>(d)].last_compute;
      if (id != kNone && result_.devices[static_cast<std::size_t>(d)].last_end > best) {
        best = result_.devices[static_cast<std::size_t>(d)].last_end;
        last = id;
      }
    }
    std::vector<OpRef> path;
    for (OpId id = last; id != kNone; id = op_[id].cause) {
      path.push_back(ref_of(id));
      PIPESIM_ASSERT(path.size() <= g_.size());
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
  const OpScale scale_;
  DependencyGraph g_;
  VersionTracker versions_;
  std::vector<OpId> succ_begin_, succs_;
  std::vector<OpState> op_;  // by op id
  std::vector<DeviceState> dev_;
  // Free time of each directed link: a dense devices x devices table up to
  // kDenseLinkDevices devices (32 MiB); beyond, a map of the pairs that talk (a file with
  // 100000 device rows must not ask for 80 GB).
  static constexpr int kDenseLinkDevices = 2048;
  std::vector<Tick> link_free_;
  std::unordered_map<std::size_t, Tick> sparse_link_free_;
  std::vector<CollectiveState> collectives_;
  std::vector<TransferRecord> in_flight_;
  std::vector<std::uint32_t> free_slots_;
  EventQueue queue_;
  Tick now_ = 0;
  SimResult result_;
};

}  // namespace

SimResult simulate(const Schedule& schedule, const CostModel& costs, SimObserver* observer) {
  return Run(schedule, costs, observer).run();
}

}  // namespace pipesim
