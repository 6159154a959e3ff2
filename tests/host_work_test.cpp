// A device thread's own work after an op (sim/event_loop.hpp's host work): the executor's
// work between two ops (CostModel::between_ops), and the sender's part of a hand-off between
// threads (TransferCost::sender, wake, latency_is_wake; docs/shared-hardware.md):
// the sending device's thread copies the message before its next op, and wakes a receiver
// that sleeps waiting for it; only a sleeping receiver pays the latency (its wake-up) when
// latency_is_wake. Closed forms on GPipe with p = 2 and 3 micro-batches, F 1 ms and B 2 ms:
//
//   device 0  F0 [0, 1000] hand-off 30 (device 1 sleeps for F0) | F1 [1030, 2030] copy 10
//             (device 1 runs F0 until 2050) | F2 [2040, 3040] copy 10 ...
//   device 1  F0 [1050, 2050] (1000 + the wake-up's 50) | F1 [2050, 3050] (its message was
//             there at 2030) | F2 [3050, 4050] ...                                   (us)
#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "cost_models/uniform.hpp"
#include "schedules/generator.hpp"
#include "sim/breakdown.hpp"
#include "sim/engine.hpp"
#include "sim/resources.hpp"
#include "sim/timeline.hpp"
#include "tests/forwarding_cost_model.hpp"
#include "tests/generated.hpp"
#include "tests/queued_pool.hpp"

namespace pipesim {
namespace {

constexpr Tick kUs = 1000;

// `base` with every message a hand-off of latency 50 us, copy `sender` and wake-up call `wake`,
// and `between` of the executor's work after every compute op.
class WithHandOff final : public testing_costs::ForwardingCostModel {
 public:
  WithHandOff(const CostModel& base, Tick sender, Tick wake, bool latency_is_wake, Tick between = 0)
      : ForwardingCostModel(base), sender_(sender), wake_(wake), latency_is_wake_(latency_is_wake), between_(between) {}
  Tick between_ops() const override { return between_; }
  TransferCost transfer(int, int, std::int64_t) const override {
    TransferCost c;
    c.latency = 50 * kUs;
    c.sender = sender_;
    c.wake = wake_;
    c.latency_is_wake = latency_is_wake_;
    return c;
  }

 private:
  Tick sender_, wake_;
  bool latency_is_wake_;
  Tick between_;
};

UniformCostConfig ops_1_2_ms() {
  UniformCostConfig c;
  c.stage.fwd = 1000 * kUs;
  c.stage.bwd = 2000 * kUs;
  return c;
}

// Each op's (start, end) in us by its text ("0F1": stage 0, micro-batch 1).
std::map<std::string, std::pair<Tick, Tick>> times(const Timeline& t) {
  std::map<std::string, std::pair<Tick, Tick>> out;
  for (const OpRecord& r : t.ops) out[to_string(r.op)] = {r.start / kUs, r.end / kUs};
  return out;
}

Timeline run(const CostModel& costs, bool event_loop_only = false, const SharedHardware* hw = nullptr) {
  Simulator sim;
  sim.always_event_loop(event_loop_only);
  TimelineRecorder rec;
  sim.run(testing_schedules::generated("gpipe", 2, 3), costs, &rec, nullptr, hw);
  return rec.timeline;
}

using Span = std::pair<Tick, Tick>;

TEST(HandOff, TheSenderCopiesAndWakesASleepingReceiverBeforeItsNextOp) {
  const UniformCostModel base(ops_1_2_ms());
  Simulator sim;
  sim.run(testing_schedules::generated("gpipe", 2, 3), WithHandOff(base, 10 * kUs, 20 * kUs, true));
  EXPECT_EQ(sim.last_path(), EnginePath::EventLoop);  // whether a receiver sleeps: the loop's order
  const auto t = times(run(WithHandOff(base, 10 * kUs, 20 * kUs, true)));
  EXPECT_EQ(t.at("0F0"), Span(0, 1000));
  EXPECT_EQ(t.at("0F1"), Span(1030, 2030));  // copy 10 + wake-up call 20: device 1 slept
  EXPECT_EQ(t.at("1F0"), Span(1050, 2050));  // the wake-up's latency
  EXPECT_EQ(t.at("0F2"), Span(2040, 3040));  // copy only: device 1 was computing
  EXPECT_EQ(t.at("1F1"), Span(2050, 3050));  // its message waited for it, no latency
  EXPECT_EQ(t.at("1F2"), Span(3050, 4050));
}

TEST(HandOff, ALatencyThatIsNotAWakeUpHoldsEveryMessage) {
  const UniformCostModel base(ops_1_2_ms());
  const auto t = times(run(WithHandOff(base, 10 * kUs, 20 * kUs, false)));
  EXPECT_EQ(t.at("0F1"), Span(1030, 2030));
  EXPECT_EQ(t.at("1F0"), Span(1050, 2050));
  EXPECT_EQ(t.at("1F1"), Span(2080, 3080));  // 2030 + 50: the receiver was busy, the latency holds
}

TEST(HandOff, TheSendersPartsAreNoOpsBusyTime) {
  const UniformCostModel base(ops_1_2_ms());
  Simulator sim;
  const SimResult r = sim.run(testing_schedules::generated("gpipe", 2, 3), WithHandOff(base, 10 * kUs, 20 * kUs, true));
  // Device 0: three F and three B, nothing else counted busy.
  EXPECT_EQ(r.devices[0].busy, 9000 * kUs);
  EXPECT_EQ(r.devices[1].busy, 9000 * kUs);
}

TEST(HandOff, ASharedPoolWithACoreForEveryDeviceGivesTheFastPathsTimes) {
  const UniformCostModel base(ops_1_2_ms());
  const WithHandOff costs(base, 10 * kUs, 20 * kUs, true);
  const SharedHardware hw = testing_hardware::queued_pool(2, 2);
  const Timeline alone = run(costs);
  const Timeline pooled = run(costs, true, &hw);
  EXPECT_EQ(times(pooled), times(alone));
}

TEST(HandOff, OnOneQueuedCoreTheSendersPartTakesTheCore) {
  // Device 0 keeps the core for its hand-off (1000-1030) and its F1 (1030-2030); device 1's
  // F0, its input there at 1050, waits for the core until 2030.
  const UniformCostModel base(ops_1_2_ms());
  const SharedHardware hw = testing_hardware::queued_pool(2, 1);
  const auto t = times(run(WithHandOff(base, 10 * kUs, 20 * kUs, true), true, &hw));
  EXPECT_EQ(t.at("0F1"), Span(1030, 2030));
  EXPECT_EQ(t.at("1F0").second, 3030);
}

TEST(HandOff, NothingChangesWithoutOne) {
  // All parts 0: the ready pass runs the schedule (with no observer that wants transfers),
  // at the times it always had: device 1's F1 at 2050, its message there since 1050.
  const UniformCostModel base(ops_1_2_ms());
  const WithHandOff costs(base, 0, 0, false);
  Simulator sim;
  const SimResult fast = sim.run(testing_schedules::generated("gpipe", 2, 3), costs);
  EXPECT_EQ(sim.last_path(), EnginePath::ReadyPass);
  EXPECT_EQ(times(run(costs)).at("1F1"), Span(2050, 3050));
  sim.always_event_loop(true);
  EXPECT_EQ(sim.run(testing_schedules::generated("gpipe", 2, 3), costs).makespan, fast.makespan);
}

TEST(HostWork, TheExecutorsWorkBetweenOpsHoldsTheDeviceAfterEachOp) {
  // 5 us after each op, a latency of 50 us that is not a wake-up: device 0's F1 at 1005 and F2
  // at 2010; device 1's F0 at 1050, its F1 at 2055, when F1's message arrives (2005 + 50).
  const UniformCostModel base(ops_1_2_ms());
  const WithHandOff costs(base, 0, 0, false, 5 * kUs);
  Simulator sim;
  const SimResult r = sim.run(testing_schedules::generated("gpipe", 2, 3), costs);
  EXPECT_EQ(sim.last_path(), EnginePath::EventLoop);
  EXPECT_EQ(r.devices[0].busy, 9000 * kUs);  // no op's busy time
  const auto t = times(run(costs));
  EXPECT_EQ(t.at("0F1"), Span(1005, 2005));
  EXPECT_EQ(t.at("0F2"), Span(2010, 3010));
  EXPECT_EQ(t.at("1F0"), Span(1050, 2050));
  EXPECT_EQ(t.at("1F1"), Span(2055, 3055));
  // With a hand-off as well, the two add up: 30 + 5 after F0.
  EXPECT_EQ(times(run(WithHandOff(base, 10 * kUs, 20 * kUs, true, 5 * kUs))).at("0F1"), Span(1035, 2035));
}

// --breakdown counts the thread's own work as `host`, not as pipeline wait: 5 us after each
// of a device's 7 compute ops (3 F, 3 B, its OPT), in the window [0, makespan] but device
// 0's last (after the run's last op, its OPT).
TEST(HostWork, TheBreakdownCountsItAsHost) {
  const UniformCostModel base(ops_1_2_ms());
  const WithHandOff costs(base, 0, 0, false, 5 * kUs);
  const Schedule s = testing_schedules::generated("gpipe", 2, 3);
  BreakdownRecorder recorder(s);
  const SimResult r = simulate(s, costs, &recorder);
  const TimeBreakdown b = time_breakdown(s, r, costs, recorder);
  EXPECT_EQ(b.per_device[0][TimeCategory::Host], 30 * kUs);
  EXPECT_EQ(b.per_device[1][TimeCategory::Host], 35 * kUs);
  // Without it the same time is no one's work: pipeline wait, idle.
  BreakdownRecorder plain(s);
  const SimResult q = simulate(s, base, &plain);
  EXPECT_EQ(time_breakdown(s, q, base, plain).per_device[1][TimeCategory::Host], 0);
  // The ops' own time is the same either way.
  EXPECT_EQ(b.per_device[1][TimeCategory::Forward], 3000 * kUs);
  EXPECT_EQ(b.per_device[1][TimeCategory::Backward], 6000 * kUs);
}

// With GradSync collectives beside it (Chimera's two pipelines), each device's categories
// still add up to the window, host work counted where the thread works (before a collective
// that runs at the same time on the communication stream).
TEST(HostWork, BesideGradSyncsTheCategoriesStillAddUp) {
  UniformCostConfig config = ops_1_2_ms();
  config.grad_bytes = 1'000'000;  // 1 ms a GradSync at 1 GB/s
  config.link_bandwidth = 1e9;
  const UniformCostModel base(config);
  const WithHandOff costs(base, 0, 0, false, 5 * kUs);
  const Schedule s = testing_schedules::generated("chimera", 2, 4);
  BreakdownRecorder recorder(s);
  const SimResult r = simulate(s, costs, &recorder);
  const TimeBreakdown b = time_breakdown(s, r, costs, recorder);
  for (int d = 0; d < 2; ++d) {
    SCOPED_TRACE(d);
    EXPECT_GT(b.per_device[static_cast<std::size_t>(d)][TimeCategory::Host], 0);
    EXPECT_EQ(b.per_device[static_cast<std::size_t>(d)].total(), b.window_ticks());
    // At most 5 us after each of its compute ops.
    EXPECT_LE(b.per_device[static_cast<std::size_t>(d)][TimeCategory::Host],
              5 * kUs * static_cast<Tick>(s.ops[static_cast<std::size_t>(d)].size()));
    EXPECT_GT(b.per_device[static_cast<std::size_t>(d)][TimeCategory::DpSync], 0);
  }
}

// A GradSync run as the CPU executor runs it (CollectiveStyle::MemberThreads): the last
// member's sum and every copy in are host work, and the categories still add up to the window.
TEST(HostWork, TheMembersSumsAndCopiesInAreHostWorkAndTheCategoriesAddUp) {
  class MemberSums final : public testing_costs::ForwardingCostModel {
   public:
    using ForwardingCostModel::ForwardingCostModel;
    Tick grad_sync_work(const Op&, OpScale) const override { return 30 * kUs; }
    Tick grad_sync_work_after(const Op&, OpScale) const override { return 10 * kUs; }
    CollectiveStyle collective_style() const override { return CollectiveStyle::MemberThreads; }
  };
  UniformCostConfig config = ops_1_2_ms();
  config.grad_bytes = 1'000'000;  // a 1 ms sum at 1 GB/s
  config.link_bandwidth = 1e9;
  const UniformCostModel base(config);
  const MemberSums costs(base);
  const Schedule s = testing_schedules::generated("chimera", 2, 4);
  BreakdownRecorder recorder(s);
  const SimResult r = simulate(s, costs, &recorder);
  const TimeBreakdown b = time_breakdown(s, r, costs, recorder);
  Tick host = 0;
  for (int d = 0; d < 2; ++d) {
    SCOPED_TRACE(d);
    EXPECT_EQ(b.per_device[static_cast<std::size_t>(d)].total(), b.window_ticks());
    host += b.per_device[static_cast<std::size_t>(d)][TimeCategory::Host];
  }
  // Chimera p = 2: two GradSyncs of two members each, one sum (1 ms) each and four copies in.
  EXPECT_EQ(host, 2 * 1000 * kUs + 4 * 10 * kUs);
}

// Whether a receiver sleeps is decided when its message is sent, and events often tie (F and
// B of whole milliseconds): the fast path and a pool with cores to spare must decide alike.
TEST(HandOff, EveryGeneratorAlikeOnTheFastPathAndInAPoolWithCoresToSpare) {
  const UniformCostModel base(ops_1_2_ms());
  const WithHandOff costs(base, 10 * kUs, 20 * kUs, true, 5 * kUs);
  for (const GeneratorInfo& g : generators()) {
    const Schedule s = testing_schedules::generated(std::string(g.name).c_str(), 4, 8, 2);
    SharedHardware hw;
    ComputePool pool;
    for (int d = 0; d < s.num_devices; ++d) pool.devices.push_back(d);
    hw.pools.push_back(pool);
    Simulator sim;
    TimelineRecorder fast, shared;
    const SimResult a = sim.run(s, costs, &fast);
    const SimResult b = sim.run(s, costs, &shared, nullptr, &hw);
    EXPECT_EQ(a.makespan, b.makespan) << g.name;
    EXPECT_EQ(times(fast.timeline), times(shared.timeline)) << g.name;
  }
}

TEST(HandOff, RerunsAreIdentical) {
  const UniformCostModel base(ops_1_2_ms());
  const WithHandOff costs(base, 10 * kUs, 20 * kUs, true);
  const auto a = times(run(costs));
  const auto b = times(run(costs));
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace pipesim
