#include "tools/validate_replay.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <set>
#include <unordered_set>
#include <utility>

#include "core/error.hpp"
#include "core/percentile.hpp"
#include "cost_models/replayed.hpp"
#include "sim/engine.hpp"

namespace pipesim {
namespace {

// The pool of each device whose devices outnumber its cores (a thread may wait for a core
// there), -1 for none.
std::vector<int> crowded_pool_of(const SharedHardware& hardware, int devices) {
  std::vector<int> out(static_cast<std::size_t>(devices), -1);
  for (std::size_t p = 0; p < hardware.pools.size(); ++p) {
    const ComputePool& pool = hardware.pools[p];
    if (!(pool.cores > 0 && static_cast<double>(pool.devices.size()) > pool.cores)) continue;
    for (int d : pool.devices)
      if (d >= 0 && d < devices) out[static_cast<std::size_t>(d)] = static_cast<int>(p);
  }
  return out;
}

// Whether every member of `c` goes on to its OptStep right after it (other GradSyncs
// between): then a member's GradSync record, which ends when its OptStep has copied the sum
// back in, ends as soon as the sum is back (the sum, the copy, the wake-up), and the
// collective lasts until the last member's end. Otherwise (AMDP: the OptStep comes ops
// later) that end holds other work, and the collective lasts until the sum is made.
bool steps_right_after(const Schedule& schedule, const CollectiveRecord& c) {
  for (const OpRef& m : c.participants) {
    const auto& list = schedule.ops[static_cast<std::size_t>(m.device)];
    const Op& sync = list[static_cast<std::size_t>(m.index)];
    auto next = static_cast<std::size_t>(m.index) + 1;
    while (next < list.size() && list[next].kind == OpKind::GradSync) ++next;
    if (next >= list.size() || list[next] != opt_step(sync.stage, sync.pipeline)) return false;
  }
  return true;
}

// Measured times per key, those of the counted iterations where a key has any, else all.
// `KeySet`: a set of keys (std::set, or std::unordered_set with a hash).
template <class Key, class KeySet>
class CountedFirst {
 public:
  void add(const Key& key, Tick t, bool counted) {
    (counted ? counted_ : others_).push_back({key, t});
    if (counted) keys_.insert(key);
  }
  std::vector<std::pair<Key, Tick>> kept() const {
    std::vector<std::pair<Key, Tick>> out = counted_;
    for (const auto& e : others_)
      if (!keys_.count(e.first)) out.push_back(e);
    return out;
  }

 private:
  std::vector<std::pair<Key, Tick>> counted_, others_;
  KeySet keys_;
};

// Each op's iteration, by (device, index): a micro-batch op's from its micro-batch, a stage
// op's (GradSync, OptStep: the same Op each time) from where it comes among its device's
// repeats of it, spread evenly over the iterations (once per iteration: the k-th is
// iteration k; AMP's step after every backward, m per iteration: the k-th is k / m).
std::vector<std::vector<int>> iterations_of_ops(const Schedule& schedule) {
  std::vector<std::vector<int>> out(schedule.ops.size());
  for (std::size_t d = 0; d < schedule.ops.size(); ++d) {
    const auto key = [&](const Op& op) {
      return std::make_pair(static_cast<int>(op.kind), op.stage * schedule.num_pipelines + op.pipeline);
    };
    std::map<std::pair<int, int>, std::int64_t> total, seen;  // per stage op (kind, replica)
    for (const Op& op : schedule.ops[d])
      if (is_stage_op(op.kind)) ++total[key(op)];
    for (const Op& op : schedule.ops[d]) {
      if (!is_stage_op(op.kind)) {
        out[d].push_back(schedule.iteration_of(op.microbatch));
        continue;
      }
      const auto k = key(op);
      out[d].push_back(static_cast<int>(seen[k]++ * schedule.iterations / total[k]));
    }
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::pair<int, int>, Tick>> measured_hand_offs(const Schedule& schedule,
                                                                     const Timeline& measured,
                                                                     const SharedHardware& hardware, int warmup) {
  // Each op's record, by (device, index).
  std::vector<std::vector<const OpRecord*>> record(static_cast<std::size_t>(schedule.num_devices));
  for (std::size_t d = 0; d < record.size(); ++d) record[d].assign(schedule.ops[d].size(), nullptr);
  for (const OpRecord& r : measured.ops) {
    PIPESIM_ASSERT(r.ref.device >= 0 && r.ref.device < schedule.num_devices);
    auto& list = record[static_cast<std::size_t>(r.ref.device)];
    PIPESIM_ASSERT(r.ref.index >= 0 && static_cast<std::size_t>(r.ref.index) < list.size());
    list[static_cast<std::size_t>(r.ref.index)] = &r;
  }
  // The last message each consumer got (the one it waited for, if it waited).
  std::map<std::pair<int, int>, const TransferRecord*> last;
  for (const TransferRecord& t : measured.transfers) {
    const auto key = std::make_pair(t.to.device, t.to.index);
    if (auto [it, added] = last.emplace(key, &t); !added && t.arrival > it->second->arrival) it->second = &t;
  }
  const std::vector<int> pools = crowded_pool_of(hardware, schedule.num_devices);
  std::vector<std::pair<std::pair<int, int>, Tick>> out;
  for (const auto& [key, t] : last) {
    const int src = t->from.device, dst = t->to.device;
    const int pool = pools[static_cast<std::size_t>(dst)];
    if (pool >= 0 && pool == pools[static_cast<std::size_t>(src)]) continue;  // a wait for a core, too
    const OpRecord* consumer = record[static_cast<std::size_t>(dst)][static_cast<std::size_t>(t->to.index)];
    if (consumer == nullptr || schedule.iteration_of(consumer->op.microbatch) < warmup) continue;
    const Tick device_free = t->to.index == 0 ? 0 : [&] {
      const OpRecord* prev = record[static_cast<std::size_t>(dst)][static_cast<std::size_t>(t->to.index - 1)];
      return prev == nullptr ? Tick{0} : prev->end;
    }();
    if (device_free >= t->arrival || consumer->start < t->ready) continue;  // it did not wait for this one
    out.push_back({{src, dst}, consumer->start - t->ready});
  }
  return out;
}

Replay replay_on_measured(const Schedule& schedule, const CostModel& costs, const Timeline& measured,
                          const SharedHardware& hardware, int warmup, Tick predicted_time, Tick measured_time,
                          const std::vector<SyncWork>& sync_work) {
  // A micro-batch op at its own time; a stage op (OptStep, GradSync: the same Op in every
  // iteration) at the mean over the counted iterations, or over all where none is counted
  // (the first GradSync pays for fresh pages: gpt-small Chimera's took 68 ms, later ones 16 ms).
  const std::vector<std::vector<int>> iteration = iterations_of_ops(schedule);
  const auto counted = [&](const OpRef& ref) {
    return iteration[static_cast<std::size_t>(ref.device)][static_cast<std::size_t>(ref.index)] >= warmup;
  };
  CountedFirst<Op, std::unordered_set<Op, OpHash>> op_times;
  for (const OpRecord& r : measured.ops)
    if (is_compute(r.op.kind)) op_times.add(r.op, r.end - r.start, !is_stage_op(r.op.kind) || counted(r.ref));
  // A GradSync member's copies, out and in, as its GradSync's work (the same Op every iteration).
  std::map<std::pair<int, int>, Tick> copy_in;
  CountedFirst<Op, std::unordered_set<Op, OpHash>> copies_in;  // CollectiveStyle::MemberThreads: the part after the sum
  Tick predicted_work = 0, measured_work = 0;
  int members = 0;
  for (const SyncWork& w : sync_work) {
    const Op& op = schedule.ops[static_cast<std::size_t>(w.member.device)][static_cast<std::size_t>(w.member.index)];
    PIPESIM_ASSERT(op.kind == OpKind::GradSync);
    op_times.add(op, w.copy_out + w.copy_in, counted(w.member));
    copy_in[{w.member.device, w.member.index}] = w.copy_in;
    copies_in.add(op, w.copy_in, counted(w.member));
    if (!counted(w.member)) continue;
    ++members;
    predicted_work += costs.grad_sync_work(op, scale_of(schedule));
    measured_work += w.copy_out + w.copy_in;
  }
  const auto hand_offs = measured_hand_offs(schedule, measured, hardware, warmup);
  std::map<std::pair<int, int>, Tick> member_end;
  for (const OpRecord& r : measured.ops)
    if (r.op.kind == OpKind::GradSync) member_end[{r.ref.device, r.ref.index}] = r.end;
  CountedFirst<std::pair<int, std::int64_t>, std::set<std::pair<int, std::int64_t>>> collectives;
  for (const CollectiveRecord& c : measured.collectives) {
    PIPESIM_ASSERT(!c.participants.empty());
    Tick end = c.end;
    // Run as the executor runs it (the sum on the last member's device, the copies in after
    // it, each on its own): the collective is the sum.
    if (costs.collective_style() != CostModel::CollectiveStyle::MemberThreads && steps_right_after(schedule, c))
      for (const OpRef& m : c.participants)
        if (const auto it = member_end.find({m.device, m.index}); it != member_end.end()) {
          const auto in = copy_in.find({m.device, m.index});  // replayed as the member's work
          end = std::max(end, it->second - (in == copy_in.end() ? 0 : in->second));
        }
    collectives.add({static_cast<int>(c.participants.size()), c.bytes}, end - c.start, counted(c.participants.front()));
  }
  const ReplayedCostModel replayed(costs, op_times.kept(), hand_offs, collectives.kept(), copies_in.kept());
  // The same hardware, less what the measured times hold already: each core's speed, the
  // interference of the neighbours, a core's turns between devices, and a time-sliced core's
  // sharing (an op's wall time is stretched by the others sharing its core). A queue's wait
  // for a core is not in them.
  SharedHardware same = hardware;
  same.device_slowdown.clear();
  for (ComputePool& pool : same.pools) {
    pool.slowdown = SlowdownCurves{};
    pool.turn_slowdown = kNoSlowdown;
    if (!pool.queue) pool.cores = 0;
  }
  const auto replay = [&](const CostModel& model) {
    Simulator simulator;
    return summarize(schedule, simulator.run(schedule, model, nullptr, nullptr, &same), warmup).time_per_iteration;
  };
  Replay r;
  r.time_per_iteration = replay(replayed);
  r.sync_members = members;
  if (members > 0) {
    r.sync_work_predicted = predicted_work / members;
    r.sync_work_measured = measured_work / members;
  }
  // The run's ops with the cost model's messages and collectives: which of the two the cost
  // model's part is.
  const Tick ops_only = replay(ReplayedCostModel(costs, op_times.kept(), {}, {}, copies_in.kept()));
  r.hand_offs = static_cast<int>(hand_offs.size());
  if (!hand_offs.empty()) {
    std::vector<Tick> times;
    double sum = 0;
    for (const auto& h : hand_offs) {
      times.push_back(h.second);
      sum += static_cast<double>(h.second);
    }
    r.hand_off_mean = static_cast<Tick>(std::llround(sum / static_cast<double>(times.size())));
    r.hand_off_median = lower_median(std::move(times));
  }
  if (measured_time > 0) {
    const auto m = static_cast<double>(measured_time);
    r.simulator_part = (static_cast<double>(r.time_per_iteration) - m) / m;
    r.cost_part = (static_cast<double>(predicted_time) - static_cast<double>(r.time_per_iteration)) / m;
    r.cost_ops_part = (static_cast<double>(predicted_time) - static_cast<double>(ops_only)) / m;
    r.cost_comm_part = (static_cast<double>(ops_only) - static_cast<double>(r.time_per_iteration)) / m;
  }
  return r;
}

}  // namespace pipesim
