#include "sim/ready_pass.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "core/error.hpp"
#include "schedules/dependency_walk.hpp"
#include "sim/activation_account.hpp"
#include "sim/buffer.hpp"
#include "sim/critical_path.hpp"
#include "sim/versions.hpp"

namespace pipesim {
namespace {

// The pass cannot give this schedule its exact times (ready_pass.hpp): the event loop will.
struct NotHere {};

constexpr std::uint32_t kNone = 0xFFFFFFFFu;
constexpr std::uint32_t kIsI = 0x80000000u;  // Produced::id of an I (the backward table holds B or I)

// What an F, B or I left for the ops that need it, by (pipeline, stage, micro-batch): the
// dependency rules (schedules/dependency_walk.hpp) without an op index. An op looks up the
// producers its rule names, and if one has not run yet its device waits for it there.
//   F(k,s)   needs F(k,s-1)                  forward table (stage s-1 -> s)
//   B/I(k,s) needs F(k,s) and B/I(k,s+1)     forward table (same device); backward table
//   W(k,s)   needs I(k,s)                    backward table (same device)
//   OptStep  needs nothing (no GradSync here)
// An input made on the op's own device ran earlier in its list, so it ended no later than
// the device became free: only its having run and its weight version count, not its time.
// Bytes 0xFF in every field mean "nothing yet" (arrival == kNotYet, id == kNone).
struct Produced {
  Tick arrival;      // >= 0: when its output reaches the device that needs it (F: stage s+1's,
                     // B/I: s-1's; its own at the last or first stage); kNotYet: not run yet;
                     // below: device -2 - arrival waits for it
  std::uint32_t id;  // the op (device-major id), | kIsI for an I
  std::int32_t forward_version;  // the weight version its forward used (an F: its own)
};
static_assert(sizeof(Produced) == 16);
constexpr Tick kNotYet = -1;

}  // namespace

struct ReadyPassBuffers::Arrays {
  Buffer<Produced> forward, backward;
  Buffer<std::uint8_t> weight_grads;  // W(k,s) ran: duplicates are the event loop's to report
  Buffer<std::uint32_t> causes;  // per op (device-major id): what let it start last, or kNone
};

ReadyPassBuffers::ReadyPassBuffers() = default;
ReadyPassBuffers::~ReadyPassBuffers() = default;
ReadyPassBuffers::ReadyPassBuffers(ReadyPassBuffers&&) noexcept = default;
ReadyPassBuffers& ReadyPassBuffers::operator=(ReadyPassBuffers&&) noexcept = default;

namespace {

// What the cost model said of an op (Pass::op_costs): `duration` -1 until asked.
struct OpCosts {
  Tick duration = -1;
  ActivationCost activation;
  TransferCost message;  // of its output to the device that needs it, once sent
  bool message_known = false;
  std::uint64_t ops = 0;  // ops that ran with these answers (for OpTotals, when they are shared)
};

class Pass {
 public:
  // `observer`: gets each op's record as it ends (null: no records).
  Pass(const Schedule& s, const CostModel& costs, SimObserver* observer, const SimProgress* progress,
       ReadyPassBuffers::Arrays& arrays)
      : s_(s), costs_(costs), observer_(observer), progress_(progress && progress->report ? progress : nullptr),
        next_report_(progress_ ? std::max<std::uint64_t>(1, progress_->every) : ~std::uint64_t{0}),
        scale_(scale_of(s)), versions_(s) {
    stages_ = s.num_stages;
    iterations_ = std::max(1, s.iterations);
    pipelines_ = s.num_pipelines;
    microbatches_ = std::int64_t{std::max(0, s.microbatches)} * std::max(1, s.iterations);
    std::size_t total = 0;
    dev_.resize(static_cast<std::size_t>(s.num_devices));
    for (std::size_t d = 0; d < dev_.size(); ++d) {
      dev_[d].base = static_cast<std::uint32_t>(total);
      dev_[d].size = static_cast<std::uint32_t>(s.ops[d].size());
      total += s.ops[d].size();
      if (total >= kIsI) throw NotHere{};
    }
    // Sparse micro-batch ids (an imported schedule numbering 0, 1000, 2000, ...) would make
    // the tables mostly empty: more than two entries per op.
    const std::size_t replicas = std::max<std::size_t>(1, static_cast<std::size_t>(pipelines_) * static_cast<std::size_t>(stages_));
    if (static_cast<std::size_t>(microbatches_) > 2 * (total + 1024) / replicas) throw NotHere{};
    const std::size_t entries = replicas * static_cast<std::size_t>(microbatches_);
    forward_ = arrays.forward.get(entries);
    backward_ = arrays.backward.get(entries);
    weight_grads_ = arrays.weight_grads.get(entries);
    causes_ = arrays.causes.get(total);
    if (entries > 0) {  // an empty Buffer is null, which memset must not get even for 0 bytes
      std::memset(static_cast<void*>(forward_), 0xFF, entries * sizeof(Produced));
      std::memset(static_cast<void*>(backward_), 0xFF, entries * sizeof(Produced));
      std::memset(weight_grads_, 0, entries);
    }
    for (int pipeline = 0; pipeline < pipelines_; ++pipeline) {
      const std::vector<int>& on = s.placement[static_cast<std::size_t>(pipeline)];
      for (int stage = 0; stage < stages_; ++stage) {
        const auto at = [&](int k) { return on[static_cast<std::size_t>(k)]; };
        placed_.push_back({at(stage), at(stage > 0 ? stage - 1 : stage), at(stage + 1 < stages_ ? stage + 1 : stage)});
      }
    }
    iteration_end_.assign(static_cast<std::size_t>(iterations_), 0);
    if (costs.same_for_every_microbatch()) cached_.resize(replicas * kNumOpKinds);
  }

  // Runs every device's list; throws NotHere where the pass is not exact. Performance: out of
  // line, as GCC 12 chose until ready_pass() shrank; inlined there, the loop took 5 M more
  // instructions at p = 128, m = 2048 (callgrind, 235.6 M -> 240.0 M for the whole run).
  [[gnu::noinline]] void run() {
    ready_.reserve(dev_.size());
    for (std::size_t d = dev_.size(); d-- > 0;) ready_.push_back(static_cast<int>(d));
    while (!ready_.empty()) {
      const int d = ready_.back();
      ready_.pop_back();
      advance(d);
    }
    for (const DeviceState& dev : dev_)
      if (dev.next < dev.size) throw NotHere{};  // a missing producer or a deadlock
    if (sent_ != received_) throw NotHere{};     // a message to an op the schedule does not have
    if (progress_) progress_->report(ops_done_);
  }

  void result(SimResult& out) const {
    out.makespan = makespan_;
    out.devices.clear();
    for (std::size_t d = 0; d < dev_.size(); ++d)
      out.devices.push_back(device_stats(dev_[d].busy, dev_[d].first_start, dev_[d].last_end, dev_[d].memory,
                                         versions_.peak_versions_held(static_cast<int>(d))));
    out.critical_path = critical_path();
    out.events = ops_done_ + sent_;  // what the event loop pushes: a finish per op, an arrival per message
    out.iteration_end = iteration_end_;
    out.staleness = versions_.staleness();
  }

  // The op records added up (observer.hpp, kOpTotals): every op of a (pipeline, stage,
  // kind) took the one duration the model gave them all. Only when the answers are shared.
  OpTotals totals() const {
    PIPESIM_ASSERT(!cached_.empty());
    OpTotals out;
    for (std::size_t key = 0; key < cached_.size(); ++key) {
      const OpCosts& c = cached_[key];
      if (c.ops == 0) continue;
      const auto replica = static_cast<int>(key / kNumOpKinds);
      const int pipeline = replica / stages_, stage = replica % stages_;
      out.groups.push_back({placed_[static_cast<std::size_t>(replica)].device, pipeline, stage,
                            static_cast<OpKind>(key % kNumOpKinds), c.ops, c.duration});
    }
    return out;
  }

  // Whether the observer has had a record (restart() it if the pass gives up).
  bool emitted() const { return observer_ && ops_done_ > 0; }

 private:
  struct DeviceState {
    std::uint32_t next = 0, size = 0;
    std::uint32_t base = 0;      // device-major id of its first op
    std::uint32_t last = kNone;  // its last op so far
    bool started = false;
    Tick free_at = 0, first_start = 0, last_end = 0, busy = 0;
    ActivationAccount memory;
    std::vector<std::pair<int, Tick>> links;  // free time of its outgoing links, by destination
  };

  // Runs device d's list until an op must wait for an input (then d waits in that input's
  // Produced::end) or the list is done.
  void advance(int d) {
    DeviceState& dev = dev_[static_cast<std::size_t>(d)];
    const Op* list = s_.ops[static_cast<std::size_t>(d)].data();
    while (dev.next < dev.size && run_op(d, dev, list[dev.next])) {
    }
  }

  // The producer in `e` (made on `producer_device`) if it has run; else d waits for it.
  [[gnu::always_inline]] const Produced* input(Produced& e, int producer_device, int d) {
    if (e.arrival >= 0) return &e;
    // On d's own device it would come later in d's list, or never: the event loop stops
    // there too. A second device waiting for one producer: one of them waits forever.
    if (producer_device == d || e.arrival != kNotYet) throw NotHere{};
    e.arrival = -2 - static_cast<Tick>(d);
    return nullptr;
  }

  // Starts and ends one op of device d at the times the event loop gives it, or returns
  // false if it must wait for an input.
  bool run_op(int d, DeviceState& dev, const Op& op) {
    if (!is_compute(op.kind)) throw NotHere{};  // GradSync, SEND, RECV
    // Unsigned: a negative pipeline or stage fails the same test.
    if (static_cast<unsigned>(op.pipeline) >= static_cast<unsigned>(pipelines_) ||
        static_cast<unsigned>(op.stage) >= static_cast<unsigned>(stages_))
      throw NotHere{};
    const std::size_t replica =
        static_cast<std::size_t>(op.pipeline) * static_cast<std::size_t>(stages_) + static_cast<std::size_t>(op.stage);
    const Placed& placed = placed_[replica];
    if (placed.device != d) throw NotHere{};
    const bool microbatch_op = is_microbatch_op(op.kind);
    std::size_t key = 0;  // (pipeline, stage, micro-batch) in the tables
    const auto m = static_cast<std::size_t>(microbatches_);
    if (microbatch_op) {
      if (op.microbatch < 0 || op.microbatch >= microbatches_) throw NotHere{};
      key = replica * m + static_cast<std::size_t>(op.microbatch);
    }
    // Its inputs: the latest one (`released`, from `cause`), as the event loop's satisfy()
    // keeps it. An input from the op's own device (a B's or I's forward, a W's I) ended by
    // the time the device is free, so the device's previous op is the cause below whenever
    // it would have been the latest (a tie goes to the device's previous op: the header).
    Tick released = 0;
    std::uint32_t cause = kNone;
    std::int32_t forward_version = -1;
    std::uint64_t crossing = 0;  // inputs from another device: messages received
    const int last_stage = stages_ - 1;
    switch (op.kind) {
      case OpKind::F:
        if (op.stage > 0) {
          const Produced* in = input(forward_[key - m], placed.before, d);
          if (!in) return false;
          released = in->arrival;
          cause = in->id;
          crossing = placed.before != d;
        }
        break;
      case OpKind::B:
      case OpKind::I: {
        const Produced* f = input(forward_[key], d, d);
        forward_version = f->forward_version;
        if (op.stage < last_stage) {
          const Produced* b = input(backward_[key + m], placed.after, d);
          if (!b) return false;
          if (b->arrival > released) released = b->arrival, cause = b->id & ~kIsI;
          crossing = placed.after != d;
        }
        break;
      }
      case OpKind::W: {
        const Produced* in = input(backward_[key], d, d);
        if (!(in->id & kIsI)) throw NotHere{};  // a B: the W's input-gradient backward is missing
        forward_version = in->forward_version;
        break;
      }
      default:  // OptStep
        break;
    }

    // It starts when its device reaches it; which constraint let it go last: the device's
    // previous op if that ended no earlier than the inputs (Slot::released).
    if (dev.last != kNone && dev.free_at >= released) cause = dev.last;
    const Tick start = std::max(dev.free_at, released);
    std::int32_t version = -1;
    if (microbatch_op) {
      version = versions_.start(op, replica, forward_version);
      if (op.kind == OpKind::F) forward_version = version;
    }
    OpCosts& c = op_costs(op, replica, microbatch_op);
    const Tick duration = c.duration;
    ++c.ops;
    if (!dev.started) dev.first_start = start, dev.started = true;
    if (op.kind == OpKind::F) dev.memory.change(d, op.kind, c.activation);
    const Tick end = later(start, duration);
    dev.busy += duration;  // at most `end`: the device's ops do not overlap

    // It ends.
    const std::uint32_t id = dev.base + dev.next;
    ++dev.next;
    dev.free_at = end;
    dev.last = id;
    dev.last_end = end;
    makespan_ = std::max(makespan_, end);
    if (microbatch_op) {
      if (op.kind != OpKind::F) dev.memory.change(d, op.kind, c.activation);
      // One iteration: every id is below its count (checked above), no division.
      const auto t = iterations_ == 1 ? std::size_t{0} : static_cast<std::size_t>(s_.iteration_of(op.microbatch));
      if (t >= iteration_end_.size()) iteration_end_.resize(t + 1, 0);
      iteration_end_[t] = std::max(iteration_end_[t], end);
    }
    if (microbatch_op || op.kind == OpKind::OptStep) versions_.end(op, replica, version, forward_version, d);
    causes_[id] = cause;
    if (observer_) observer_->on_op(OpRecord{OpRef{d, static_cast<int>(id - dev.base)}, op, start, end, version});
    received_ += crossing;
    if (++ops_done_ >= next_report_) [[unlikely]] report_progress();

    // What it leaves for the ops that need it.
    switch (op.kind) {
      case OpKind::F:
        produce(forward_[key], d, placed.after, op, c, end, id, version);
        break;
      case OpKind::B:
      case OpKind::I:
        produce(backward_[key], d, placed.before, op, c, end,
                id | (op.kind == OpKind::I ? kIsI : 0), forward_version);
        break;
      case OpKind::W:
        if (weight_grads_[key]) throw NotHere{};  // a duplicate
        weight_grads_[key] = 1;
        break;
      default:
        break;
    }
    return true;
  }

  // The op (on d) ended at `end`; its output goes to device `to` (a message if that is
  // another device: sent now, so in d's list order, FIFO on the link). Wakes the device
  // waiting for it.
  [[gnu::always_inline]] void produce(Produced& e, int d, int to, const Op& op, OpCosts& c, Tick end,
                                      std::uint32_t id, std::int32_t forward_version) {
    if (e.arrival >= 0) throw NotHere{};  // a duplicate, or both B and I of one micro-batch and stage
    const Tick waiting = e.arrival;
    e = Produced{to == d ? end : send(d, to, op, c, end), id, forward_version};
    if (waiting < kNotYet) ready_.push_back(static_cast<int>(-2 - waiting));
  }

  // A message on link (src, dst): FIFO behind earlier ones for its occupancy, then the
  // latency, which does not hold the link (sim/engine.hpp).
  Tick send(int src, int dst, const Op& producer, OpCosts& c, Tick ready) {
    if (!c.message_known) {  // asked once per (kind, pipeline, stage) when the answers are shared
      c.message = costs_.transfer(src, dst, costs_.message_bytes(producer, scale_));
      PIPESIM_ASSERT(c.message.occupancy >= 0 && c.message.latency >= 0);
      if (c.message.hand_off()) throw NotHere{};  // whether its receiver sleeps: the event loop's order
      c.message_known = cached_.size() > 0;
    }
    const TransferCost cost = c.message;
    Tick& link = link_free(src, dst);
    const Tick link_end = later(std::max(ready, link), cost.occupancy);
    link = link_end;
    ++sent_;
    return later(link_end, cost.latency);
  }
  Tick& link_free(int src, int dst) {
    auto& links = dev_[static_cast<std::size_t>(src)].links;
    for (auto& [to, free] : links)
      if (to == dst) return free;
    if (links.size() >= 16) throw NotHere{};  // a device sending to many: not a pipeline the pass is for
    return links.emplace_back(dst, 0).second;
  }

  // What the cost model says of an op: asked once per (kind, pipeline, stage) when its
  // answers are the same for every micro-batch (CostModel::same_for_every_microbatch), else
  // for each op. The message (to the device its output goes to, fixed by the placement) is
  // asked when the op first sends one (send()). The same questions as the event loop's: its
  // activation only for a micro-batch op.
  [[gnu::always_inline]] OpCosts& op_costs(const Op& op, std::size_t replica, bool microbatch_op) {
    OpCosts* c = &scratch_;
    if (!cached_.empty()) {
      c = &cached_[replica * kNumOpKinds + static_cast<std::size_t>(op.kind)];
      if (c->duration >= 0) [[likely]]
        return *c;
    } else {
      c->message_known = false;
    }
    c->duration = costs_.compute_time(op, scale_);
    PIPESIM_ASSERT(c->duration >= 0);
    if (microbatch_op) c->activation = costs_.activation(op, scale_);
    return *c;
  }

  [[gnu::noinline]] void report_progress() {
    progress_->report(ops_done_);
    next_report_ = ops_done_ + std::max<std::uint64_t>(1, progress_->every);
  }

  std::vector<OpRef> critical_path() const {
    return pipesim::critical_path(
        dev_, kNone, [](const DeviceState& dev) { return dev.last; }, [](const DeviceState& dev) { return dev.last_end; },
        [this](std::uint32_t id) { return causes_[id]; },
        [this](std::uint32_t id) {
          // The device whose ids hold it: the last whose first id is at most id (devices
          // without ops share their base with the next one).
          const auto it = std::upper_bound(dev_.begin(), dev_.end(), id,
                                           [](std::uint32_t v, const DeviceState& dev) { return v < dev.base; });
          const auto d = static_cast<std::size_t>(it - dev_.begin()) - 1;
          return OpRef{static_cast<int>(d), static_cast<int>(id - dev_[d].base)};
        },
        ops_done_);
  }


  const Schedule& s_;
  const CostModel& costs_;
  SimObserver* const observer_;
  const SimProgress* progress_;
  std::uint64_t next_report_;
  const OpScale scale_;
  VersionTracker versions_;
  int stages_ = 0, pipelines_ = 0, iterations_ = 1;
  std::int64_t microbatches_ = 0;  // micro-batch ids over all iterations: [0, microbatches_)
  std::vector<DeviceState> dev_;
  // By (pipeline, stage): the device holding it, and those holding the stages before and
  // after it, where its inputs come from and its outputs go (its own at the first and the
  // last stage).
  struct Placed {
    int device, before, after;
  };
  std::vector<Placed> placed_;
  std::vector<int> ready_;  // devices that may go on (each at most once)
  std::vector<OpCosts> cached_;  // by (pipeline, stage, kind); empty: the model is asked for every op
  OpCosts scratch_;
  Produced* forward_ = nullptr;
  Produced* backward_ = nullptr;
  std::uint8_t* weight_grads_ = nullptr;
  std::uint32_t* causes_ = nullptr;
  std::vector<Tick> iteration_end_;
  Tick makespan_ = 0;
  std::uint64_t ops_done_ = 0, sent_ = 0, received_ = 0;
};

}  // namespace

bool ready_pass(const Schedule& schedule, const CostModel& costs, SimObserver* observer, const SimProgress* progress,
                const SharedHardware* hardware, ReadyPassBuffers& buffers, SimResult& out) {
  if (hardware && !hardware->shares_nothing()) return false;
  if (costs.between_ops() > 0) return false;  // host work between ops: the event loop's (start_host_work)
  const std::uint8_t wants = observer ? observer->wants() : 0;
  if ((wants & (kTransferRecords | kMemoryRecords)) || (observer && observer->needs_time_order())) return false;
  // Op records, or their totals (observer.hpp): added up only where every op of a (pipeline,
  // stage, kind) takes the one time the model gives them all.
  const bool totals = !(wants & kOpRecords) && (wants & kOpTotals) && costs.same_for_every_microbatch();
  const bool records = (wants & kOpRecords) || ((wants & kOpTotals) && !totals);
  if (!buffers.arrays) buffers.arrays = std::make_unique<ReadyPassBuffers::Arrays>();
  std::optional<Pass> pass;
  try {
    check_schedule_shape(schedule);  // before the lists are read
    pass.emplace(schedule, costs, records ? observer : nullptr, progress, *buffers.arrays);
    pass->run();
    if (hardware) hardware->check(schedule.num_devices);
  } catch (const NotHere&) {
    if (pass && pass->emitted()) observer->restart();
    return false;
  } catch (const InputError&) {
    if (pass && pass->emitted()) observer->restart();
    return false;  // the event loop reports it, with what it finds first
  }
  pass->result(out);
  if (totals) observer->on_op_totals(pass->totals());
  return true;
}

}  // namespace pipesim
