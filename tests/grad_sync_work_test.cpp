// A GradSync member's own work (CostModel::grad_sync_work, sim/engine.hpp): the member's
// device does it before it joins the collective, holding the device and, in a pool, a core;
// it counts as no op's busy time and ends in no op record of its own. Closed forms on the
// data-parallel pair (tests/sync_pair.hpp), on the fast path and in a queued pool.
#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "cost_models/uniform.hpp"
#include "schedules/generator.hpp"
#include "sim/engine.hpp"
#include "sim/resources.hpp"
#include "sim/timeline.hpp"
#include "tests/generated.hpp"
#include "tests/sync_pair.hpp"
#include "tests/forwarding_cost_model.hpp"
#include "tests/queued_pool.hpp"

namespace pipesim {
namespace {

constexpr Tick kMs = 1'000'000;

// `base`, and `work[pipeline]` of GradSync work per member.
class WithSyncWork final : public testing_costs::ForwardingCostModel {
 public:
  WithSyncWork(const CostModel& base, std::map<int, Tick> work) : ForwardingCostModel(base), work_(std::move(work)) {}
  Tick grad_sync_work(const Op& op, OpScale) const override {
    const auto it = work_.find(op.pipeline);
    return it == work_.end() ? 0 : it->second;
  }

 private:
  std::map<int, Tick> work_;
};

// F and B 1 ms each, a 10 ms allreduce.
UniformCostConfig pair_costs() {
  UniformCostConfig c;
  c.stage.fwd = kMs;
  c.stage.bwd = kMs;
  c.grad_bytes = 10'000'000;
  c.link_bandwidth = 1e9;
  return c;
}

std::pair<Tick, Tick> span(Tick start, Tick end) { return {start, end}; }

using testing_hardware::queued_pool;

// F 1 us, B 2 us, a 1 us allreduce.
UniformCostConfig short_ops() {
  UniformCostConfig c;
  c.stage.fwd = 1000;
  c.stage.bwd = 2000;
  c.grad_bytes = 1000;
  c.link_bandwidth = 1e9;
  return c;
}

// Each op's (start, end) by (device, index).
std::map<std::pair<int, int>, std::pair<Tick, Tick>> times(const Timeline& t) {
  std::map<std::pair<int, int>, std::pair<Tick, Tick>> out;
  for (const OpRecord& r : t.ops) out[{r.ref.device, r.ref.index}] = {r.start, r.end};
  return out;
}

TEST(GradSyncWork, HoldsTheDeviceBeforeTheMemberJoinsTheCollective) {
  // F 0-1, B 1-2, the member's work 2-2.5 ms; the collective 2.5-12.5 ms; F1 2.5-3.5, B1 -4.5.
  const Schedule s = testing_schedules::sync_pair();
  TimelineRecorder rec;
  const SimResult r = simulate(s, WithSyncWork(UniformCostModel(pair_costs()), {{0, kMs / 2}, {1, kMs / 2}}), &rec);
  ASSERT_EQ(rec.timeline.collectives.size(), 1u);
  EXPECT_EQ(rec.timeline.collectives[0].start, 2'500'000);
  EXPECT_EQ(rec.timeline.collectives[0].end, 12'500'000);
  const auto t = times(rec.timeline);
  EXPECT_EQ(t.at({0, 2}), span(2 * kMs, 12'500'000));  // the GradSync: reached at 2 ms
  EXPECT_EQ(t.at({0, 3}), span(2'500'000, 3'500'000));
  EXPECT_EQ(t.at({1, 4}), span(3'500'000, 4'500'000));
  EXPECT_EQ(r.makespan, 12'500'000);
  EXPECT_EQ(r.devices[0].busy, 4 * kMs);  // the copies are no op's busy time
  EXPECT_EQ(rec.timeline.ops.size(), s.total_ops());
}

TEST(GradSyncWork, TheSlowerMembersWorkStartsTheCollective) {
  const Schedule s = testing_schedules::sync_pair();
  TimelineRecorder rec;
  simulate(s, WithSyncWork(UniformCostModel(pair_costs()), {{1, kMs}}), &rec);
  ASSERT_EQ(rec.timeline.collectives.size(), 1u);
  EXPECT_EQ(rec.timeline.collectives[0].start, 3 * kMs);
  const auto t = times(rec.timeline);
  EXPECT_EQ(t.at({0, 3}).first, 2 * kMs);  // device 0 has no work of its own: goes on at once
  EXPECT_EQ(t.at({1, 3}).first, 3 * kMs);
}

TEST(GradSyncWork, ABlockingSyncWaitsForTheCollectiveAfterTheWork) {
  Schedule s = testing_schedules::sync_pair();
  s.blocking_grad_sync = true;
  TimelineRecorder rec;
  const SimResult r = simulate(s, WithSyncWork(UniformCostModel(pair_costs()), {{0, kMs / 2}, {1, kMs / 2}}), &rec);
  EXPECT_EQ(times(rec.timeline).at({0, 3}), span(12'500'000, 13'500'000));
  EXPECT_EQ(r.makespan, 14'500'000);
}

// As a CPU executor runs a GradSync (CollectiveStyle::MemberThreads): `work` per member, the
// last `after` of it once the sum is made; the collective (the uniform model's 10 ms
// allreduce) is the last member's sum, on its device.
class WithMemberSums final : public testing_costs::ForwardingCostModel {
 public:
  WithMemberSums(const CostModel& base, std::map<int, Tick> work, Tick after)
      : ForwardingCostModel(base), work_(std::move(work)), after_(after) {}
  Tick grad_sync_work(const Op& op, OpScale) const override { return work_.at(op.pipeline); }
  CollectiveStyle collective_style() const override { return CollectiveStyle::MemberThreads; }
  Tick grad_sync_work_after(const Op&, OpScale) const override { return after_; }

 private:
  std::map<int, Tick> work_;
  Tick after_;
};

// The timeline (ops, collectives) and the device threads' host work.
struct WithHostWork final : SimObserver {
  void on_op(const OpRecord& r) override { timeline.ops.push_back(r); }
  void on_collective(const CollectiveRecord& r) override { timeline.collectives.push_back(r); }
  void on_host_work(const HostWorkRecord& h) override { host.push_back({h.device, {h.start, h.end}}); }
  Timeline timeline;
  std::vector<std::pair<int, std::pair<Tick, Tick>>> host;
};

TEST(GradSyncWork, TheLastMemberSumsOnItsDeviceAndEachCopiesTheSumInAfterIt) {
  // F 0-1, B 1-2 on both. Copies out: device 0 2-2.3, device 1 (the last) 2-2.8; the sum on
  // device 1 2.8-12.8 while device 0 runs F1 2.3-3.3, B1 3.3-4.3; the copies in 12.8-13.0 on
  // both; device 1's F1 13-14, B1 14-15.
  const Schedule s = testing_schedules::sync_pair();
  WithHostWork rec;
  const SimResult r =
      simulate(s, WithMemberSums(UniformCostModel(pair_costs()), {{0, kMs / 2}, {1, kMs}}, kMs / 5), &rec);
  ASSERT_EQ(rec.timeline.collectives.size(), 1u);
  EXPECT_EQ(rec.timeline.collectives[0].start, 2'800'000);
  EXPECT_EQ(rec.timeline.collectives[0].end, 12'800'000);
  const auto t = times(rec.timeline);
  EXPECT_EQ(t.at({0, 3}), span(2'300'000, 3'300'000));
  EXPECT_EQ(t.at({0, 4}), span(3'300'000, 4'300'000));
  EXPECT_EQ(t.at({1, 2}), span(2 * kMs, 12'800'000));  // the GradSync's record: reached to the sum's end
  EXPECT_EQ(t.at({1, 3}), span(13 * kMs, 14 * kMs));
  EXPECT_EQ(r.makespan, 15 * kMs);
  // Device 1's thread: its copy out is no record; the sum and both copies in are host work.
  EXPECT_EQ(rec.host, (std::vector<std::pair<int, std::pair<Tick, Tick>>>{
                      {1, span(2'800'000, 12'800'000)}, {0, span(12'800'000, 13 * kMs)}, {1, span(12'800'000, 13 * kMs)}}));
}

// ... and a hand-off link whose latency is a sleeper's wake-up (a CPU profile's): the member
// that sleeps waiting for the sum wakes `latency` after it, on no core, and the summer's call
// that wakes it (`wake`) is its own work before its copy in.
class WithMemberSumsAndWakes final : public testing_costs::ForwardingCostModel {
 public:
  explicit WithMemberSumsAndWakes(const CostModel& base) : ForwardingCostModel(base) {}
  Tick grad_sync_work(const Op& op, OpScale) const override { return op.pipeline == 0 ? kMs / 2 : kMs; }
  CollectiveStyle collective_style() const override { return CollectiveStyle::MemberThreads; }
  Tick grad_sync_work_after(const Op&, OpScale) const override { return kMs / 5; }
  // Only the sum's wake-up call (copy_sums_in asks for 0 bytes); messages as the base has them.
  TransferCost transfer(int src, int dst, std::int64_t bytes) const override {
    if (bytes > 0) return ForwardingCostModel::transfer(src, dst, bytes);
    TransferCost t;
    t.latency = kMs / 10;
    t.wake = kMs / 20;
    t.latency_is_wake = true;
    return t;
  }
};

TEST(GradSyncWork, AMemberThatSleepsForTheSumIsWokenByTheSummer) {
  // As above to the sum's end at 12.8 ms, device 0 idle since 4.3 ms: it wakes at 12.9 and
  // copies in 12.9-13.1; device 1 calls it (0.05 ms) and copies in: 12.8-13.05, then F1, B1.
  const Schedule s = testing_schedules::sync_pair();
  WithHostWork rec;
  const SimResult r = simulate(s, WithMemberSumsAndWakes(UniformCostModel(pair_costs())), &rec);
  EXPECT_EQ(times(rec.timeline).at({1, 3}), span(13'050'000, 14'050'000));
  EXPECT_EQ(r.makespan, 15'050'000);
  EXPECT_EQ(rec.host, (std::vector<std::pair<int, std::pair<Tick, Tick>>>{{1, span(2'800'000, 12'800'000)},
                                                                         {1, span(12'800'000, 13'050'000)},
                                                                         {0, span(12'900'000, 13'100'000)}}));
}

TEST(GradSyncWork, TakesACoreOfItsPoolInTurnWithTheOps) {
  // Both devices on one core, ops queued in arrival order: F0 0-1 (device 0), 1-2 (device 1),
  // B0 2-3, 3-4; the members' work 4-4.5 and 4.5-5 ms; the collective from 5 ms. Device 0's
  // F1, ready at 4.5 ms, waits for device 1's work: 5-6 ms.
  const Schedule s = testing_schedules::sync_pair();
  const SharedHardware hw = queued_pool(2, 1);
  TimelineRecorder rec;
  const SimResult r = simulate(s, WithSyncWork(UniformCostModel(pair_costs()), {{0, kMs / 2}, {1, kMs / 2}}), &rec, nullptr, &hw);
  ASSERT_EQ(rec.timeline.collectives.size(), 1u);
  EXPECT_EQ(rec.timeline.collectives[0].start, 5 * kMs);
  const auto t = times(rec.timeline);
  EXPECT_EQ(t.at({0, 3}), span(5 * kMs, 6 * kMs));
  EXPECT_EQ(t.at({1, 3}), span(6 * kMs, 7 * kMs));
  EXPECT_EQ(r.devices[0].busy + r.devices[1].busy, 8 * kMs);
  EXPECT_EQ(r.makespan, 15 * kMs);
}

// Each op's duration varies with its micro-batch, pipeline and a seed (as a sampled
// model's draws do), and every GradSync member has work.
class Varied final : public testing_costs::ForwardingCostModel {
 public:
  Varied(const CostModel& base, std::uint64_t seed, Tick work) : ForwardingCostModel(base), seed_(seed), work_(work) {}
  Tick compute_time(const Op& op, OpScale s) const override {
    const std::uint64_t h = (seed_ * 0x9E3779B97F4A7C15ull) ^ (static_cast<std::uint64_t>(op.microbatch) * 1315423911ull) ^
                            (static_cast<std::uint64_t>(op.pipeline * 31 + op.stage) * 2654435761ull) ^
                            static_cast<std::uint64_t>(op.kind);
    return base().compute_time(op, s) * (8 + static_cast<Tick>((h >> 17) % 9)) / 10;
  }
  Tick grad_sync_work(const Op&, OpScale) const override { return work_; }

 private:
  std::uint64_t seed_;
  Tick work_;
};

TEST(GradSyncWork, TheCriticalPathThroughAQueuedPoolEndsAtItsFirstOp) {
  // AMDP's 4 devices on 2 queued cores (validate's layout on the 2-vCPU VM), each member with
  // work: an op that got its core from a member's work must not name it as its cause (that
  // member's cause becomes its collective's last arrival, which may come after the op: the
  // critical path looped, an invariant failure in `validate`'s intervals).
  UniformCostConfig c = short_ops();
  c.optimizer = 500;
  c.link_latency = 60;
  c.message_bytes = 1000;
  const UniformCostModel uniform(c);
  const SharedHardware hw = queued_pool(4, 2);
  const Schedule s = testing_schedules::generated("amdp", 4, 4, 6);
  int runs = 0;
  for (std::uint64_t seed = 0; seed < 40; ++seed)
    for (Tick work : {Tick{100}, Tick{700}, Tick{2500}}) {
      const SimResult r = simulate(s, Varied(uniform, seed, work), nullptr, nullptr, &hw);
      EXPECT_FALSE(r.critical_path.empty());
      ++runs;
    }
  EXPECT_EQ(runs, 120);
}

TEST(GradSyncWork, TheFastPathAndASharedPoolWithCoresToSpareAgreeForEveryGenerator) {
  // Every generator with the members' work (300 ns, every pipeline's): on the fast path, and
  // with every device in one pool without a core limit (the shared path, nothing slowed).
  const UniformCostModel uniform(short_ops());
  const WithSyncWork model(uniform, {{0, 300}, {1, 300}, {2, 300}, {3, 300}});
  int with_collectives = 0;
  for (const GeneratorInfo& g : generators()) {
    const Schedule s = testing_schedules::generated(std::string(g.name).c_str(), 4, 8, 2);
    TimelineRecorder fast, shared;
    const SimResult a = simulate(s, model, &fast);
    SharedHardware hw;
    ComputePool pool;
    for (int d = 0; d < s.num_devices; ++d) pool.devices.push_back(d);
    hw.pools.push_back(pool);
    const SimResult b = simulate(s, model, &shared, nullptr, &hw);
    EXPECT_EQ(a.makespan, b.makespan) << g.name;
    EXPECT_EQ(times(fast.timeline), times(shared.timeline)) << g.name;
    for (std::size_t d = 0; d < a.devices.size(); ++d) EXPECT_EQ(a.devices[d].busy, b.devices[d].busy) << g.name;
    with_collectives += fast.timeline.collectives.empty() ? 0 : 1;
  }
  EXPECT_GE(with_collectives, 3);  // the test saw members' work (AMDP, Chimera, ...)
}

// The members' threads summing (MemberThreads, with wakes): every generator runs every op
// once, the same on the fast path and in a pool with cores to spare, and again the same.
TEST(GradSyncWork, MemberSumsRunEveryGeneratorAlikeOnBothPathsAndAgain) {
  UniformCostConfig c = short_ops();
  c.message_bytes = 1000;  // messages of their own cost; only the sum's wake-up call asks for 0 bytes
  const UniformCostModel uniform(c);
  const WithMemberSumsAndWakes model(uniform);
  int with_collectives = 0;
  for (const GeneratorInfo& g : generators()) {
    const Schedule s = testing_schedules::generated(std::string(g.name).c_str(), 4, 8, 2);
    TimelineRecorder fast, again, shared;
    const SimResult a = simulate(s, model, &fast);
    simulate(s, model, &again);
    SharedHardware hw;
    ComputePool pool;
    for (int d = 0; d < s.num_devices; ++d) pool.devices.push_back(d);
    hw.pools.push_back(pool);
    const SimResult b = simulate(s, model, &shared, nullptr, &hw);
    EXPECT_EQ(fast.timeline.ops.size(), static_cast<std::size_t>(s.total_ops())) << g.name;
    EXPECT_EQ(times(fast.timeline), times(again.timeline)) << g.name;
    EXPECT_EQ(a.makespan, b.makespan) << g.name;
    EXPECT_EQ(times(fast.timeline), times(shared.timeline)) << g.name;
    with_collectives += fast.timeline.collectives.empty() ? 0 : 1;
  }
  EXPECT_GE(with_collectives, 3);
}

// MemberThreads with ops, messages and copies of whole milliseconds, so that events tie: the
// member that sums, and whether another sleeps for the sum, must not depend on the order in
// which the queue hands out one tick's events (a pool pushes its finishes in another order
// than the fast path). Before the tick's end decided the sums (EventLoop::end_tick), 26 of these
// runs took another time in the pool (AMDP, Chimera; a wake-up's 20 us to a whole op).
class TiedMemberSums final : public testing_costs::ForwardingCostModel {
 public:
  TiedMemberSums(const CostModel& base, Tick work, Tick after, Tick sender, Tick between, Tick latency)
      : ForwardingCostModel(base), work_(work), after_(after), sender_(sender), between_(between), latency_(latency) {}
  Tick grad_sync_work(const Op&, OpScale) const override { return work_; }
  CollectiveStyle collective_style() const override { return CollectiveStyle::MemberThreads; }
  Tick grad_sync_work_after(const Op&, OpScale) const override { return after_; }
  Tick between_ops() const override { return between_; }
  TransferCost transfer(int, int, std::int64_t) const override {
    TransferCost t;
    t.latency = latency_;
    t.sender = sender_;
    t.wake = 20'000;
    t.latency_is_wake = true;
    return t;
  }

 private:
  Tick work_, after_, sender_, between_, latency_;
};

TEST(GradSyncWork, MemberSumsAtEventTiesRunAlikeOnBothPaths) {
  int runs = 0;
  for (Tick backward : {kMs, 2 * kMs})
    for (const GeneratorInfo& g : generators())
      for (const auto& [p, m] : {std::pair{4, 4}, std::pair{4, 8}, std::pair{8, 8}}) {
        Schedule s;
        try {
          s = testing_schedules::generated(std::string(g.name).c_str(), p, m, 2);
        } catch (const InputError&) {
          continue;  // a shape this generator does not take (ZB-H1: m >= 2p, ...)
        }
        SharedHardware hw;
        ComputePool pool;
        for (int d = 0; d < s.num_devices; ++d) pool.devices.push_back(d);
        hw.pools.push_back(pool);
        for (Tick latency : {kMs / 20, kMs})
          for (Tick work : {Tick{0}, 2 * kMs})
            for (Tick after : {Tick{0}, kMs})
              for (Tick sender : {Tick{0}, kMs / 100}) {
                UniformCostConfig c;
                c.stage.fwd = kMs;
                c.stage.bwd = backward;
                const UniformCostModel uniform(c);
                const TiedMemberSums model(uniform, work, after, sender, kMs / 200, latency);
                EXPECT_EQ(simulate(s, model).makespan, simulate(s, model, nullptr, nullptr, &hw).makespan)
                    << g.name << " p " << p << " m " << m << " backward " << backward << " latency " << latency
                    << " work " << work << " after " << after << " sender " << sender;
                ++runs;
              }
      }
  EXPECT_GE(runs, 1536);  // 2 backward times x 48 (generator, shape) pairs (2026-12) x 16 cost settings
}

}  // namespace
}  // namespace pipesim
