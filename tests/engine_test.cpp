// The engine on hand-written schedules: link costs, FIFO link queueing, collectives,
// versions, memory, deadlocks and broken inputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "cost_models/uniform.hpp"
#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "schedules/op_text.hpp"
#include "sim/engine.hpp"
#include "sim/observer.hpp"
#include "sim/timeline.hpp"
#include "tests/same_run.hpp"
#include "tests/sync_pair.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;

// Builds a single-pipeline schedule from text lists, stage s on device s % devices.
Schedule from_text(int devices, int stages, const std::vector<std::vector<std::string>>& lists) {
  Schedule s;
  s.name = "hand";
  s.num_devices = devices;
  s.num_stages = stages;
  s.placement = round_robin_placement(stages, devices);
  for (const auto& list : lists) {
    s.ops.emplace_back();
    for (const auto& text : list) s.ops.back().push_back(*parse_op(text));
  }
  return s;
}

UniformCostConfig ms_costs(int fwd_ms, int bwd_ms) {
  UniformCostConfig c;
  c.stage.fwd = fwd_ms * kNsPerMs;
  c.stage.bwd = bwd_ms * kNsPerMs;
  return c;
}

std::map<std::string, OpRecord> by_name(const Timeline& t) {
  std::map<std::string, OpRecord> out;
  for (const auto& r : t.ops) out[to_string(r.op)] = r;
  return out;
}

TEST(Engine, ZeroCostLinksGiveDependencyOnlyTiming) {
  // 2 stages, 2 micro-batches, 1F1B order. F=1ms, B=2ms.
  const Schedule s = from_text(2, 2, {{"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1B0", "1F1", "1B1"}});
  TimelineRecorder rec;
  const SimResult r = simulate(s, UniformCostModel(ms_costs(1, 2)), &rec);
  auto ops = by_name(rec.timeline);
  EXPECT_EQ(ops["1F0"].start, 1 * kNsPerMs);
  EXPECT_EQ(ops["1B0"].start, 2 * kNsPerMs);
  EXPECT_EQ(ops["1F1"].start, 4 * kNsPerMs);
  EXPECT_EQ(ops["0B0"].start, 4 * kNsPerMs);
  EXPECT_EQ(r.makespan, (2 + 2 - 1) * 3 * kNsPerMs);  // (m+p-1)(tF+tB)
  EXPECT_EQ(r.devices[0].busy, 6 * kNsPerMs);
  EXPECT_EQ(rec.timeline.ops.size(), 8u);
}

TEST(Engine, LinkDelaysDependentByExactlyLatencyPlusBytesOverBandwidth) {
  const Schedule s = from_text(2, 2, {{"0F0", "0B0"}, {"1F0", "1B0"}});
  UniformCostConfig c = ms_costs(1, 2);
  c.link_latency = 10 * kNsPerUs;
  c.link_bandwidth = 1e9;         // 1 GB/s
  c.message_bytes = 2'000'000;    // 2 ms on the link
  TimelineRecorder rec;
  simulate(s, UniformCostModel(c), &rec);
  auto ops = by_name(rec.timeline);
  const Tick hop = 2 * kNsPerMs + 10 * kNsPerUs;
  EXPECT_EQ(ops["1F0"].start, 1 * kNsPerMs + hop);
  EXPECT_EQ(ops["0B0"].start, ops["1B0"].end + hop);
  ASSERT_EQ(rec.timeline.transfers.size(), 2u);
  EXPECT_EQ(rec.timeline.transfers[0].bytes, 2'000'000);
  EXPECT_EQ(rec.timeline.transfers[0].arrival - rec.timeline.transfers[0].ready, hop);
}

TEST(Engine, TransfersQueueFifoOnTheLinkButLatencyIsPipelined) {
  // Device 0 sends two forwards back to back with F = 0: both messages are ready at t = 0.
  const Schedule s = from_text(2, 2, {{"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1F1", "1B0", "1B1"}});
  UniformCostConfig c = ms_costs(0, 0);
  c.link_latency = 5 * kNsPerMs;
  c.link_bandwidth = 1e9;
  c.message_bytes = 1'000'000;  // 1 ms occupancy
  TimelineRecorder rec;
  simulate(s, UniformCostModel(c), &rec);
  auto ops = by_name(rec.timeline);
  EXPECT_EQ(ops["1F0"].start, 6 * kNsPerMs);  // 1 ms on the link + 5 ms latency
  EXPECT_EQ(ops["1F1"].start, 7 * kNsPerMs);  // waits 1 ms for the link, latency overlaps
}

TEST(Engine, CollectiveWaitsForAllParticipantsAndCostsRingAllreduce) {
  // Two pipelines each with one stage, on devices 0 and 1: a data-parallel pair.
  Schedule s;
  s.num_devices = 2;
  s.num_stages = 1;
  s.num_pipelines = 2;
  s.placement = {{0}, {1}};
  s.ops = {{*parse_op("0F0"), *parse_op("0B0"), *parse_op("0GRADSYNC"), *parse_op("0OPT")},
           {*parse_op("1:0F1"), *parse_op("1:0B1"), *parse_op("1:0B2"), *parse_op("1:0GRADSYNC"), *parse_op("1:0OPT")}};
  s.ops[1].insert(s.ops[1].begin() + 2, *parse_op("1:0F2"));
  UniformCostConfig c = ms_costs(1, 2);
  c.grad_bytes = 4'000'000;
  c.link_bandwidth = 1e9;
  c.link_latency = 1 * kNsPerUs;
  c.optimizer = 1 * kNsPerMs;
  TimelineRecorder rec;
  const SimResult r = simulate(s, UniformCostModel(c), &rec);
  ASSERT_EQ(rec.timeline.collectives.size(), 1u);
  const auto& col = rec.timeline.collectives[0];
  EXPECT_EQ(col.start, 6 * kNsPerMs);  // device 1 reaches it after F B F B = 6 ms
  // ring: 2(r-1)/r * bytes / bw + 2(r-1) latency = 4 ms + 2 us
  EXPECT_EQ(col.end - col.start, 4 * kNsPerMs + 2 * kNsPerUs);
  auto ops = by_name(rec.timeline);
  EXPECT_EQ(ops["0OPT"].start, col.end);
  EXPECT_EQ(r.makespan, col.end + 1 * kNsPerMs);
}

TEST(Engine, NonBlockingSyncOverlapsComputeAndBlockingSyncStalls) {
  Schedule s = testing_schedules::sync_pair();
  UniformCostConfig c = ms_costs(1, 1);
  c.grad_bytes = 10'000'000;
  c.link_bandwidth = 1e9;  // 10 ms allreduce
  TimelineRecorder rec;
  EXPECT_EQ(simulate(s, UniformCostModel(c), &rec).devices[0].last_end, 4 * kNsPerMs);
  s.blocking_grad_sync = true;
  EXPECT_EQ(simulate(s, UniformCostModel(c)).devices[0].last_end, 2 * kNsPerMs + 10 * kNsPerMs + 2 * kNsPerMs);
}

TEST(Engine, OptStepBumpsVersionSeenByLaterOps) {
  const Schedule s = from_text(1, 1, {{"0F0", "0B0", "0OPT", "0F1", "0B1", "0OPT"}});
  TimelineRecorder rec;
  simulate(s, UniformCostModel(ms_costs(1, 1)), &rec);
  auto ops = by_name(rec.timeline);
  EXPECT_EQ(ops["0F0"].weight_version, 0);
  EXPECT_EQ(ops["0B0"].weight_version, 0);
  EXPECT_EQ(ops["0F1"].weight_version, 1);
  EXPECT_EQ(ops["0B1"].weight_version, 1);
}

TEST(Engine, SplitBackwardFreesMemoryInTwoParts) {
  const Schedule s = from_text(1, 1, {{"0F0", "0F1", "0I0", "0W0", "0I1", "0W1"}});
  UniformCostConfig c = ms_costs(1, 2);
  c.stage.wgrad = 1 * kNsPerMs;
  c.activation_bytes = 1000;
  c.input_grad_free_fraction = 0.25;
  TimelineRecorder rec;
  const SimResult r = simulate(s, UniformCostModel(c), &rec);
  EXPECT_EQ(r.devices[0].peak_activations, 2);
  EXPECT_EQ(r.devices[0].peak_activation_bytes, 2000);
  EXPECT_EQ(r.devices[0].final_activation_bytes, 0);
  std::vector<std::int64_t> bytes;
  for (const auto& m : rec.timeline.memory) bytes.push_back(m.bytes);
  EXPECT_EQ(bytes, (std::vector<std::int64_t>{1000, 2000, 1750, 1000, 750, 0}));
}

TEST(Engine, DeadlockNamesTheWaitingOps) {
  // Device 0 wants the backward before sending its forward on: each waits on the other.
  const Schedule s = from_text(2, 2, {{"0B0", "0F0"}, {"1F0", "1B0"}});
  try {
    simulate(s, UniformCostModel(ms_costs(1, 1)));
    FAIL() << "expected a deadlock";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("deadlock"));
    EXPECT_THAT(e.what(), HasSubstr("device 0 waits at 0B0 for 0F0 (device 0), 1B0 (device 1)"));
    EXPECT_THAT(e.what(), HasSubstr("device 1 waits at 1F0 for 0F0 (device 0)"));
  }
}

TEST(Engine, MissingProducerAndWrongDeviceAreInputErrors) {
  EXPECT_THAT([] { simulate(from_text(2, 2, {{"0F0", "0B0"}, {"1B0"}}), UniformCostModel(ms_costs(1, 1))); },
              testing::ThrowsMessage<InputError>(HasSubstr("1B0 needs its forward 1F0, which no device runs")));
  try {
    simulate(from_text(2, 2, {{"0F0", "1F0"}, {}}), UniformCostModel(ms_costs(1, 1)));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("1F0: runs on device 0, but pipeline 0 stage 1 is placed on device 1"));
  }
}

TEST(Engine, HundredsOfDuplicatesAreAnInputError) {
  // 300 copies of 1F0 all need 0F0: more successors than a slot counts (255). The walk has
  // reported the duplicates by then, and the run stops with them instead of running.
  std::vector<std::string> copies(300, "1F0");
  copies.push_back("1B0");
  EXPECT_THAT([&] { simulate(from_text(2, 2, {{"0F0", "0B0"}, copies}), UniformCostModel(ms_costs(1, 1))); },
              testing::ThrowsMessage<InputError>(HasSubstr("device 1 op 1: duplicate op 1F0 (also at device 1 position 0)")));
}

TEST(Engine, CriticalPathEndsAtTheLastOpAndIsChained) {
  const Schedule s = from_text(2, 2, {{"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1B0", "1F1", "1B1"}});
  const SimResult r = simulate(s, UniformCostModel(ms_costs(1, 2)));
  ASSERT_FALSE(r.critical_path.empty());
  EXPECT_EQ(r.critical_path.front(), (OpRef{0, 0}));
  EXPECT_EQ(r.critical_path.back(), (OpRef{0, 3}));
}

TEST(Engine, AnOpWithThreeSuccessorsReleasesThemInListOrder) {
  // Both B and I of micro-batch 0 on stage 0 (allowed, if odd): 0F0 has three successors
  // (1F0 on device 1, 0B0 and 0I0 on device 0) and 1I0 two on device 0, so both of the
  // engine's successor paths run, and 1I0's two messages queue on link (1, 0) in list order.
  const Schedule s = from_text(2, 2, {{"0F0", "0B0", "0I0", "0W0"}, {"1F0", "1I0", "1W0"}});
  UniformCostConfig c = ms_costs(1, 2);
  c.stage.wgrad = 1 * kNsPerMs;  // I = W = 1 ms
  c.link_bandwidth = 1e9;
  c.message_bytes = 1'000'000;  // 1 ms on the link, no latency
  TimelineRecorder rec;
  const SimResult r = simulate(s, UniformCostModel(c), &rec);
  auto ops = by_name(rec.timeline);
  EXPECT_EQ(rec.timeline.ops.size(), 7u);
  EXPECT_EQ(ops["1F0"].start, 2 * kNsPerMs);
  EXPECT_EQ(ops["1I0"].end, 4 * kNsPerMs);
  EXPECT_EQ(ops["1W0"].start, 4 * kNsPerMs);
  EXPECT_EQ(ops["0B0"].start, 5 * kNsPerMs);  // the first message: link 4-5 ms
  EXPECT_EQ(ops["0I0"].start, 7 * kNsPerMs);  // its message arrived at 6 ms; device busy until 7
  EXPECT_EQ(r.makespan, 9 * kNsPerMs);
  ASSERT_EQ(rec.timeline.transfers.size(), 3u);
  EXPECT_EQ(rec.timeline.transfers[1].to, (OpRef{0, 1}));
  EXPECT_EQ(rec.timeline.transfers[1].link_start, 4 * kNsPerMs);
  EXPECT_EQ(rec.timeline.transfers[2].to, (OpRef{0, 2}));
  EXPECT_EQ(rec.timeline.transfers[2].link_start, 5 * kNsPerMs);
}

// simulate() and `simulator` agree on everything.
void expect_same_run(const Schedule& s, const CostModel& costs, Simulator& simulator) {
  TimelineRecorder once, again;
  const SimResult a = simulate(s, costs, &once);
  const SimResult b = simulator.run(s, costs, &again);
  expect_same_run(a, once.timeline, b, again.timeline);
}

TEST(Simulator, RunsAfterRunLikeSimulateWhateverCameBefore) {
  // One Simulator keeps its arrays: a larger schedule after a smaller one grows them, a
  // smaller one after a larger reuses them (stale slots from the earlier run must not leak
  // in), and a run that throws leaves it usable.
  UniformCostConfig c = ms_costs(1, 2);
  c.link_latency = 10 * kNsPerUs;
  c.link_bandwidth = 1e9;
  c.message_bytes = 1'000'000;
  const UniformCostModel costs(c);
  ScheduleParams small, large;
  small.p = 2;
  small.m = 4;
  large.p = 8;
  large.m = 32;
  large.iterations = 2;
  Simulator simulator;
  expect_same_run(generate("1f1b", small), costs, simulator);
  expect_same_run(generate("zb-h2", large), costs, simulator);
  expect_same_run(generate("interleaved", small), costs, simulator);
  const Schedule deadlocked = from_text(2, 2, {{"0B0", "0F0"}, {"1F0", "1B0"}});
  EXPECT_THROW(simulator.run(deadlocked, costs), InputError);
  expect_same_run(generate("chimera", large), costs, simulator);
  Simulator moved = std::move(simulator);
  expect_same_run(generate("gpipe", small), costs, moved);
}

TEST(Simulator, ReusingWalksRunsAnEqualScheduleWithOtherCostsAndNoticesAChangedOne) {
  // reuse_walks: the second run of an equal schedule copies the first one's walk. A schedule
  // changed in place (same address: a sweep regenerates into one std::optional) or one with
  // another m must be walked again, and a run that throws must not be kept.
  UniformCostConfig c = ms_costs(1, 2);
  c.link_latency = 10 * kNsPerUs;
  c.link_bandwidth = 1e9;
  c.message_bytes = 1'000'000;
  const UniformCostModel costs(c), slower(ms_costs(3, 5));
  ScheduleParams params;
  params.p = 4;
  params.m = 8;
  params.iterations = 2;
  Simulator simulator(true);
  std::optional<Schedule> s = generate("chimera", params);
  expect_same_run(*s, costs, simulator);
  expect_same_run(*s, slower, simulator);  // the walk reused: only the costs differ
  expect_same_run(*s, costs, simulator);
  s->ops[1].erase(s->ops[1].begin() + 2);   // the same object, no longer the same schedule
  EXPECT_THROW(simulator.run(*s, costs), InputError);
  s.reset();
  params.m = 12;
  s = generate("zb-v", params);
  expect_same_run(*s, costs, simulator);
  s = generate("interleaved", params);
  expect_same_run(*s, slower, simulator);
  std::swap(s->ops[0][0], s->ops[0][1]);     // two ops of one device swapped: walked again
  TimelineRecorder once, again;
  const SimResult a = [&] {
    try {
      return simulate(*s, costs, &once);
    } catch (const InputError&) {
      return SimResult{};
    }
  }();
  try {
    const SimResult b = simulator.run(*s, costs, &again);
    expect_same_run(a, once.timeline, b, again.timeline);
  } catch (const InputError&) {
    EXPECT_EQ(a.makespan, 0) << "the reused walk accepted what a fresh one refused";
  }
}

TEST(Engine, SameInputSameOutput) {
  const Schedule s = from_text(2, 2, {{"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1B0", "1F1", "1B1"}});
  UniformCostConfig c = ms_costs(1, 2);
  c.link_latency = 3;
  c.message_bytes = 77;
  c.link_bandwidth = 1e6;
  TimelineRecorder a, b;
  simulate(s, UniformCostModel(c), &a);
  simulate(s, UniformCostModel(c), &b);
  ASSERT_EQ(a.timeline.ops.size(), b.timeline.ops.size());
  for (std::size_t i = 0; i < a.timeline.ops.size(); ++i) {
    EXPECT_EQ(a.timeline.ops[i].ref, b.timeline.ops[i].ref);
    EXPECT_EQ(a.timeline.ops[i].start, b.timeline.ops[i].start);
  }
}

// An observer that reads only some records (SimObserver::wants) gets only those, and the
// same ones a full observer gets; the run is the same with or without it.
class OnlySome final : public SimObserver {
 public:
  explicit OnlySome(std::uint8_t kinds) : kinds_(kinds) {}
  std::uint8_t wants() const override { return kinds_; }
  void on_op(const OpRecord& r) override { ops.push_back(r); }
  void on_transfer(const TransferRecord&) override { ++transfers; }
  void on_collective(const CollectiveRecord&) override { ++collectives; }
  void on_memory(const MemoryRecord&) override { ++memory; }
  std::vector<OpRecord> ops;
  int transfers = 0, collectives = 0, memory = 0;

 private:
  std::uint8_t kinds_;
};

TEST(Observer, OneThatReadsOnlyOpsAndCollectivesGetsNoTransfersOrMemory) {
  // Two pipelines of two stages, a GradSync per stage: transfers, memory and collectives.
  ScheduleParams p;
  p.p = 2;
  p.m = 4;
  p.iterations = 2;
  const Schedule s = generate("chimera", p);
  UniformCostConfig c = ms_costs(1, 2);
  c.link_latency = 7;
  c.activation_bytes = 100;
  c.grad_bytes = 1000;
  TimelineRecorder all;
  OnlySome some(kOpRecords | kCollectiveRecords);
  ObserverList both;
  both.add(&all);
  both.add(&some);
  EXPECT_EQ(both.wants(), kAllRecords);
  const SimResult with_all = simulate(s, UniformCostModel(c), &both);
  ASSERT_FALSE(all.timeline.transfers.empty());
  ASSERT_FALSE(all.timeline.memory.empty());
  ASSERT_FALSE(all.timeline.collectives.empty());

  OnlySome alone(kOpRecords | kCollectiveRecords);
  const SimResult with_some = simulate(s, UniformCostModel(c), &alone);
  EXPECT_EQ(alone.transfers, 0);
  EXPECT_EQ(alone.memory, 0);
  EXPECT_EQ(alone.collectives, static_cast<int>(all.timeline.collectives.size()));
  ASSERT_EQ(alone.ops.size(), all.timeline.ops.size());
  for (std::size_t i = 0; i < alone.ops.size(); ++i) {
    EXPECT_EQ(alone.ops[i].ref, all.timeline.ops[i].ref) << "record " << i;
    EXPECT_EQ(alone.ops[i].start, all.timeline.ops[i].start) << "record " << i;
    EXPECT_EQ(alone.ops[i].end, all.timeline.ops[i].end) << "record " << i;
    EXPECT_EQ(alone.ops[i].weight_version, all.timeline.ops[i].weight_version) << "record " << i;
  }
  EXPECT_EQ(with_some.makespan, with_all.makespan);
  EXPECT_EQ(with_some.critical_path, with_all.critical_path);

  OnlySome memory_only(kMemoryRecords);
  simulate(s, UniformCostModel(c), &memory_only);
  EXPECT_TRUE(memory_only.ops.empty());
  EXPECT_EQ(memory_only.transfers, 0);
  EXPECT_EQ(memory_only.collectives, 0);
  EXPECT_EQ(memory_only.memory, static_cast<int>(all.timeline.memory.size()));
}

}  // namespace
}  // namespace pipesim
