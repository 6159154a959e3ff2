// validate's error split (tools/validate_replay.hpp, cost_models/replayed.hpp): the simulator
// replayed on a run's own op times and hand-offs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cost_models/replayed.hpp"
#include "cost_models/uniform.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"
#include "sim/resources.hpp"
#include "sim/timeline.hpp"
#include "tests/generated.hpp"
#include "tools/validate_replay.hpp"
#include "tools/validation_output.hpp"
#include "tests/forwarding_cost_model.hpp"

namespace pipesim {
namespace {

using testing_schedules::generated;

UniformCostModel base_costs() {
  UniformCostConfig c;
  c.stage = StageCosts{1000, 2000, 0};
  c.optimizer = 500;
  c.message_bytes = 4096;
  c.link_latency = 70;
  c.link_bandwidth = 4096e9 / 30;  // 30 ns of occupancy per message
  return UniformCostModel(c);
}

// F 1 us, B 2 us, OptStep 0.5 us, a 1 us allreduce.
UniformCostConfig with_grad_sync() {
  UniformCostConfig c;
  c.stage = StageCosts{1000, 2000, 0};
  c.optimizer = 500;
  c.grad_bytes = 1 << 20;
  c.link_bandwidth = 1e12;
  return c;
}

// A simulated run of `s` as validate would have measured it: its timeline, and its time per
// iteration with one warm-up iteration.
struct OwnRun {
  Timeline timeline;
  Tick time = 0;
};
OwnRun own_run(const Schedule& s, const CostModel& costs, const SharedHardware& hardware = SharedHardware{}) {
  Simulator simulator;
  TimelineRecorder recorder;
  const SimResult run = simulator.run(s, costs, &recorder, nullptr, &hardware);
  return {recorder.timeline, summarize(s, run, 1).time_per_iteration};
}

// Each measured op at the mean of its measurements, each link at the median of its
// hand-offs; the rest from the base model.
TEST(ReplayedCostModel, MeasuredMeansElseTheBase) {
  const UniformCostModel base = base_costs();
  const OpScale scale{1, 1, 2};
  const ReplayedCostModel r(base, {{make_op(OpKind::F, 0, 0), 900}, {opt_step(1), 400}, {opt_step(1), 601}},
                            {{{0, 1}, 150}, {{0, 1}, 9000}, {{0, 1}, 140}, {{1, 2}, 100}, {{1, 2}, 200}});
  EXPECT_EQ(r.compute_time(make_op(OpKind::F, 0, 0), scale), 900);
  EXPECT_EQ(r.compute_time(opt_step(1), scale), 501);  // (400 + 601) / 2, rounded
  EXPECT_EQ(r.compute_time(make_op(OpKind::F, 0, 1), scale), base.compute_time(make_op(OpKind::F, 0, 1), scale));
  EXPECT_EQ(r.transfer(0, 1, 4096).latency, 150);  // the median: one stalled hand-off moves nothing
  EXPECT_EQ(r.transfer(1, 2, 4096).latency, 100);  // of two, the lower
  EXPECT_EQ(r.transfer(0, 1, 4096).occupancy, 0);
  EXPECT_EQ(r.transfer(1, 0, 4096).latency, base.transfer(1, 0, 4096).latency);
  EXPECT_EQ(r.transfer(1, 0, 4096).occupancy, base.transfer(1, 0, 4096).occupancy);
  EXPECT_EQ(r.message_bytes(make_op(OpKind::F, 0, 0), scale), 4096);
  // Collectives by (participants, bytes): measured where the run had one of that size.
  const ReplayedCostModel c(base, {}, {}, {{{2, 1000}, 300}, {{2, 1000}, 500}});
  EXPECT_EQ(c.allreduce_time(2, 1000), 400);
  EXPECT_EQ(c.allreduce_time(2, 2000), base.allreduce_time(2, 2000));
  EXPECT_EQ(c.allreduce_time(3, 1000), base.allreduce_time(3, 1000));
}

// Replayed on its own timeline, the simulator gives itself back: every op at its own time,
// every hand-off a consumer waited for at the link's occupancy + latency.
TEST(ValidateReplay, TheSimulatorsOwnRunReplaysToItself) {
  const UniformCostModel costs = base_costs();
  for (const char* name : {"1f1b", "gpipe", "chimera"}) {
    SCOPED_TRACE(name);
    const Schedule s = generated(name, 2, 4, 3);
    const SharedHardware nothing;
    const auto [timeline, time] = own_run(s, costs);
    const auto hand_offs = measured_hand_offs(s, timeline, nothing, 1);
    ASSERT_FALSE(hand_offs.empty());
    for (const auto& h : hand_offs) EXPECT_EQ(h.second, 100);  // 30 occupancy + 70 latency
    const Replay r = replay_on_measured(s, costs, timeline, nothing, 1, time + 50, time);
    EXPECT_EQ(r.time_per_iteration, time);
    EXPECT_EQ(r.simulator_part, 0.0);
    EXPECT_DOUBLE_EQ(r.cost_part, 50.0 / static_cast<double>(time));
    EXPECT_EQ(r.hand_off_median, 100);
    EXPECT_EQ(r.hand_off_mean, 100);
    EXPECT_EQ(r.hand_offs, static_cast<int>(hand_offs.size()));
  }
}

// On shared cores too: a time-sliced core's sharing and the interference are in the op
// times the run recorded (the replay does not apply them again), a queue's wait for a core is
// not (the replay queues again). Each replays to itself.
TEST(ValidateReplay, SharedCoresReplayToThemselves) {
  const UniformCostModel costs = base_costs();
  for (const bool queue : {false, true}) {
    SCOPED_TRACE(queue ? "queue" : "time-sliced");
    SharedHardware hw;
    ComputePool pool{{0, 1, 2, 3}, 2, queue, {}};
    pool.slowdown[static_cast<std::size_t>(OpKind::F)] = {1.0, 1.2};
    hw.pools.push_back(pool);
    hw.device_slowdown = {1.0, 1.1, 1.0, 1.3};
    const Schedule s = generated("1f1b", 4, 8, 2);
    const auto [timeline, time] = own_run(s, costs, hw);
    const Replay r = replay_on_measured(s, costs, timeline, hw, 1, time, time);
    EXPECT_EQ(r.hand_offs, 0);  // 4 devices on 2 cores: no hand-off can be told from a wait for a core
    EXPECT_EQ(r.time_per_iteration, time);
  }
}

// A hand-off is seen only where the consumer waited for it: its device had ended its op
// before the message came. Between devices that outnumber the cores of their pool it is not
// seen at all (the wait for a core is in it).
TEST(ValidateReplay, HandOffsOnlyWhereTheConsumerWaited) {
  const Schedule s = generated("1f1b", 2, 2, 1);  // dev0: 0F0 0F1 0B0 0B1 0OPT, dev1: 1F0 1B0 1F1 1B1 1OPT
  Timeline t;
  auto op = [&](int d, int i, Tick start, Tick end) {
    t.ops.push_back(OpRecord{OpRef{d, i}, s.ops[static_cast<std::size_t>(d)][static_cast<std::size_t>(i)], start, end, 0});
  };
  auto message = [&](OpRef from, OpRef to, Tick ready) {
    t.transfers.push_back(TransferRecord{from, to, ready, ready, ready + 10, ready + 10, 4096});
  };
  op(0, 0, 0, 1000);                    // 0F0
  message({0, 0}, {1, 0}, 1000);
  op(0, 1, 1000, 2000);                 // 0F1
  message({0, 1}, {1, 2}, 2000);
  op(1, 0, 1090, 2090);                 // 1F0: waited, seen 90
  op(1, 1, 2090, 4090);                 // 1B0
  message({1, 1}, {0, 2}, 4090);
  op(1, 2, 4090, 5090);                 // 1F1: its input came at 2010 while 1B0 ran: not seen
  op(0, 2, 4400, 6400);                 // 0B0: waited since 2000, seen 310
  op(1, 3, 5090, 7090);                 // 1B1
  message({1, 3}, {0, 3}, 7090);
  op(0, 3, 7150, 9150);                 // 0B1: waited since 6400, seen 60
  op(0, 4, 9150, 9650);
  op(1, 4, 7090, 7590);
  using testing::Pair;
  EXPECT_THAT(measured_hand_offs(s, t, SharedHardware{}),
              testing::ElementsAre(Pair(Pair(1, 0), 310), Pair(Pair(1, 0), 60), Pair(Pair(0, 1), 90)));
  // Both devices on one core: none seen; on two cores: all of them.
  SharedHardware one_core;
  one_core.pools.push_back(ComputePool{{0, 1}, 1, true, {}});
  EXPECT_TRUE(measured_hand_offs(s, t, one_core).empty());
  SharedHardware two_cores;
  two_cores.pools.push_back(ComputePool{{0, 1}, 2, true, {}});
  EXPECT_EQ(measured_hand_offs(s, t, two_cores).size(), 3u);
}

// Hand-offs of messages to the warm-up iterations' ops are not seen: the first messages of a
// run wait for its threads to start and for fresh pages.
TEST(ValidateReplay, HandOffsOfTheCountedIterationsOnly) {
  const UniformCostModel costs = base_costs();
  const Schedule s = generated("1f1b", 2, 4, 3);
  const Timeline t = own_run(s, costs).timeline;
  const SharedHardware nothing;
  const std::size_t all = measured_hand_offs(s, t, nothing, 0).size();
  const std::size_t two = measured_hand_offs(s, t, nothing, 1).size();
  const std::size_t one = measured_hand_offs(s, t, nothing, 2).size();
  EXPECT_GT(all, two);
  EXPECT_GT(two, one);
  EXPECT_GT(one, 0u);
  EXPECT_TRUE(measured_hand_offs(s, t, nothing, 3).empty());
}

// The run's own timeline with one record changed (its op shifted or lengthened on the record
// only): what the replay makes of it.
Tick replay_changed(const Schedule& s, Timeline t, int device, const Op& op, int occurrence, Tick shift, Tick lengthen) {
  int seen = 0;
  bool changed = false;
  for (OpRecord& r : t.ops)
    if (r.ref.device == device && r.op == op && seen++ == occurrence) {
      r.start += shift;
      r.end += shift + lengthen;
      changed = true;
    }
  EXPECT_TRUE(changed);
  return replay_on_measured(s, base_costs(), t, SharedHardware{}, 1, 0, 1).time_per_iteration;
}

// One hand-off the host stalled (its consumer started 5 us late) does not lengthen every
// message of its link; a warm-up iteration's slow optimizer step does not lengthen the
// counted ones (the replay takes a stage op at the counted iterations' mean), a counted
// one's does.
TEST(ValidateReplay, OneStallAndTheWarmUpMoveNothing) {
  const UniformCostModel costs = base_costs();
  const Schedule s = generated("1f1b", 2, 4, 3);
  const auto [timeline, time] = own_run(s, costs);
  // Device 1's forward of micro-batch 8 (iteration 2) waits for device 0's.
  EXPECT_EQ(replay_changed(s, timeline, 1, make_op(OpKind::F, 1, 8), 0, 5000, 0), time);
  EXPECT_EQ(replay_changed(s, timeline, 0, opt_step(0), 0, 0, 20000), time);  // iteration 0's step
  EXPECT_NE(replay_changed(s, timeline, 0, opt_step(0), 2, 0, 20000), time);  // iteration 2's
}

// AMP steps after every backward, m times an iteration: the steps of the warm-up iteration
// are its first m, not its first one.
TEST(ValidateReplay, AmpsWarmUpStepsAreTheFirstIterations) {
  const UniformCostModel costs = base_costs();
  const Schedule s = generated("amp", 2, 4, 3);
  const auto [timeline, time] = own_run(s, costs);
  ASSERT_EQ(replay_on_measured(s, costs, timeline, SharedHardware{}, 1, 0, 1).time_per_iteration, time);
  EXPECT_EQ(replay_changed(s, timeline, 0, opt_step(0), 3, 0, 20000), time);  // iteration 0's fourth step
  EXPECT_NE(replay_changed(s, timeline, 0, opt_step(0), 4, 0, 20000), time);  // iteration 1's first
}

// Likewise a warm-up iteration's slow gradient sum (the first pays for fresh pages).
TEST(ValidateReplay, AWarmUpGradSyncMovesNothing) {
  const UniformCostModel costs(with_grad_sync());
  const Schedule s = generated("chimera", 2, 4, 3);
  const auto [timeline, time] = own_run(s, costs);
  ASSERT_FALSE(timeline.collectives.empty());
  const auto replay_with_slow = [&](std::size_t which) {
    Timeline t = timeline;
    t.collectives[which].end += 50000;
    return replay_on_measured(s, costs, t, SharedHardware{}, 1, 0, 1).time_per_iteration;
  };
  EXPECT_EQ(replay_with_slow(0), time);
  EXPECT_NE(replay_with_slow(timeline.collectives.size() - 1), time);
}

// A run whose GradSync members each copied for 700 ns (400 out, 300 in): the replay takes
// the copies as the members' work, whatever the cost model says of them, and reports their
// mean against the cost model's.
TEST(ValidateReplay, GradSyncCopiesAreTheMembersWork) {
  const UniformCostModel costs(with_grad_sync());  // no work of its own
  class Copying final : public testing_costs::ForwardingCostModel {
   public:
    using ForwardingCostModel::ForwardingCostModel;
    Tick grad_sync_work(const Op&, OpScale) const override { return 700; }
  };
  const Schedule s = generated("amdp", 4, 4, 3);
  const auto [timeline, time] = own_run(s, Copying(costs));
  ASSERT_NE(own_run(s, costs).time, time);
  std::vector<SyncWork> copies;
  for (const OpRecord& r : timeline.ops)
    if (r.op.kind == OpKind::GradSync) copies.push_back(SyncWork{r.ref, 400, 300});
  ASSERT_FALSE(copies.empty());
  const Replay r = replay_on_measured(s, costs, timeline, SharedHardware{}, 1, 0, 1, copies);
  EXPECT_EQ(r.time_per_iteration, time);
  EXPECT_EQ(r.sync_members, static_cast<int>(copies.size() * 2 / 3));  // the 2 counted iterations' of 3
  EXPECT_EQ(r.sync_work_predicted, 0);
  EXPECT_EQ(r.sync_work_measured, 700);
  EXPECT_NE(replay_on_measured(s, costs, timeline, SharedHardware{}, 1, 0, 1).time_per_iteration, time);
}

// A CPU executor's GradSync (CollectiveStyle::MemberThreads): the members copied out for
// 400 ns and in for 300 ns, and the last one summed. The replay takes the copies out before
// the join, the copies in after the sum, and each collective as its sum (from the last
// arrival to the sum's end): it gives the run's own time back, whatever the model says.
TEST(ValidateReplay, AMemberThreadsGradSyncIsReplayedAsTheRunMadeIt) {
  class MemberThreads final : public testing_costs::ForwardingCostModel {
   public:
    MemberThreads(const CostModel& base, Tick work, Tick after) : ForwardingCostModel(base), work_(work), after_(after) {}
    Tick grad_sync_work(const Op&, OpScale) const override { return work_; }
    Tick grad_sync_work_after(const Op&, OpScale) const override { return after_; }
    CollectiveStyle collective_style() const override { return CollectiveStyle::MemberThreads; }

   private:
    Tick work_, after_;
  };
  const UniformCostModel costs(with_grad_sync());
  const Schedule s = generated("chimera", 2, 4, 3);
  const auto [timeline, time] = own_run(s, MemberThreads(costs, 700, 300));
  std::vector<SyncWork> copies;
  for (const OpRecord& r : timeline.ops)
    if (r.op.kind == OpKind::GradSync) copies.push_back(SyncWork{r.ref, 400, 300});
  ASSERT_FALSE(copies.empty());
  const MemberThreads model(costs, 100, 50);  // the prediction's copies: not the run's
  ASSERT_NE(own_run(s, model).time, time);
  EXPECT_EQ(replay_on_measured(s, model, timeline, SharedHardware{}, 1, 0, 1, copies).time_per_iteration, time);
  EXPECT_NE(replay_on_measured(s, model, timeline, SharedHardware{}, 1, 0, 1).time_per_iteration, time);
}

// The cost model's part splits at a replay with the run's ops and the cost model's links:
// a model with other op times and slower links than the run's gets each its share.
TEST(ValidateReplay, TheCostModelsPartSplitsIntoOpsAndLinks) {
  const UniformCostModel run_costs = base_costs();
  UniformCostConfig other;
  other.stage = StageCosts{1300, 2500, 0};
  other.optimizer = 500;
  other.message_bytes = 4096;
  other.link_latency = 900;
  other.link_bandwidth = 4096e9 / 30;
  const UniformCostModel model(other);
  UniformCostConfig mixed = other;  // the run's op times, the model's links
  mixed.stage = StageCosts{1000, 2000, 0};
  const UniformCostModel ops_then_links(mixed);
  const Schedule s = generated("1f1b", 2, 4, 3);
  const auto [timeline, measured] = own_run(s, run_costs);
  const Tick predicted = own_run(s, model).time;
  const Tick ops_only = own_run(s, ops_then_links).time;
  ASSERT_NE(predicted, ops_only);
  ASSERT_NE(ops_only, measured);
  const Replay r = replay_on_measured(s, model, timeline, SharedHardware{}, 1, predicted, measured);
  const auto m = static_cast<double>(measured);
  EXPECT_EQ(r.time_per_iteration, measured);
  EXPECT_DOUBLE_EQ(r.cost_ops_part, static_cast<double>(predicted - ops_only) / m);
  EXPECT_DOUBLE_EQ(r.cost_comm_part, static_cast<double>(ops_only - measured) / m);
  EXPECT_NEAR(r.cost_ops_part + r.cost_comm_part, r.cost_part, 1e-12);
}

// What the split says of a schedule that misses: whose miss it is.
TEST(ValidateReplay, AdviceSaysWhoseMissItIs) {
  std::vector<Validation> all(3);
  all[0].schedule.name = "1f1b";  // within the tolerance: nothing to say
  all[0].report.time_per_iteration_error = 0.03;
  all[1].schedule.name = "amdp";  // the cost model's
  all[1].report.time_per_iteration_error = -0.2;
  all[1].replay.simulator_part = 0.013;
  all[1].replay.cost_part = -0.213;
  all[1].replay.cost_ops_part = -0.2;
  all[1].replay.cost_comm_part = -0.013;
  all[2].schedule.name = "chimera";  // the simulator's
  all[2].report.time_per_iteration_error = -0.09;
  all[2].replay.simulator_part = -0.07;
  all[2].replay.cost_part = -0.02;
  const std::string advice = replay_advice(all, 0.05);
  EXPECT_THAT(advice, testing::Not(testing::HasSubstr("1f1b")));
  EXPECT_THAT(advice, testing::HasSubstr("amdp: on the run's own times the simulator is within 1.30 %; the miss is the "
                                         "cost model's (-21.30 %: op times -20.00 %, links and collectives -1.30 %): "
                                         "the run's ops took other times"));
  EXPECT_THAT(advice, testing::HasSubstr("chimera: even on the run's own times the simulator is off by -7.00 %"));
  EXPECT_THAT(advice, testing::Not(testing::HasSubstr("stalled")));
  // Hand-offs whose mean is far above their median: the host stalled some.
  all[2].replay.hand_offs = 100;
  all[2].replay.hand_off_median = 78000;
  all[2].replay.hand_off_mean = 208000;
  EXPECT_THAT(replay_advice(all, 0.05),
              testing::HasSubstr("; the hand-offs seen took 208.000 us on average against a median of 78.000 us: the host "
                                 "stalled some, which the replay (each link at its median) leaves out"));
  EXPECT_EQ(replay_advice({all[0]}, 0.05), "");
}

}  // namespace
}  // namespace pipesim
