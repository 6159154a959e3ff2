// The engine on shared hardware (sim/resources.hpp, sim/sharing.hpp): processor sharing
// on cores, max-min sharing of NICs, interference curves and compute/communication overlap
// against their closed forms; a description whose factors are all 1 gives the fast path's
// times for every generator; determinism; broken descriptions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>

#include "core/error.hpp"
#include "cost_models/uniform.hpp"
#include "schedules/generator.hpp"
#include "schedules/op_text.hpp"
#include "sim/engine.hpp"
#include "sim/resources.hpp"
#include "sim/timeline.hpp"
#include "tests/generated.hpp"
#include "tests/sync_pair.hpp"
#include "tests/forwarding_cost_model.hpp"

namespace pipesim {
namespace {

using testing::HasSubstr;

// `devices` devices with one list each, stage d on device d (one pipeline).
Schedule lists(const std::vector<std::vector<std::string>>& ops) {
  Schedule s;
  s.name = "hand";
  s.num_devices = static_cast<int>(ops.size());
  s.num_stages = s.num_devices;
  s.placement = round_robin_placement(s.num_stages, s.num_devices);
  for (const auto& list : ops) {
    s.ops.emplace_back();
    for (const auto& text : list) s.ops.back().push_back(*parse_op(text));
  }
  return s;
}

// One F of micro-batch 0 on each of `devices` devices, all stage 0 (data-parallel
// replicas: no dependencies between them), so they all start at t = 0.
Schedule independent_forwards(int devices) {
  Schedule s;
  s.name = "replicas";
  s.num_devices = devices;
  s.num_stages = 1;
  s.num_pipelines = devices;
  s.placement.assign(static_cast<std::size_t>(devices), {});
  for (int d = 0; d < devices; ++d) {
    s.placement[static_cast<std::size_t>(d)] = {d};
    Op f = make_op(OpKind::F, 0, 0, d);
    s.ops.push_back({f, make_op(OpKind::B, 0, 0, d)});
  }
  return s;
}

UniformCostConfig ns_costs(Tick fwd, Tick bwd) {
  UniformCostConfig c;
  c.stage.fwd = fwd;
  c.stage.bwd = bwd;
  return c;
}

SharedHardware pool_of(int devices, double cores) {
  SharedHardware hw;
  ComputePool pool;
  pool.devices.resize(static_cast<std::size_t>(devices));
  std::iota(pool.devices.begin(), pool.devices.end(), 0);
  pool.cores = cores;
  hw.pools.push_back(pool);
  return hw;
}

TEST(Sharing, KEqualOpsOnCCoresEndAtTheProcessorSharingClosedForm) {
  for (int k : {1, 2, 3, 4, 7})
    for (double cores : {1.0, 2.0, 3.0}) {
      const Tick d = 1000;
      const SharedHardware hw = pool_of(k, cores);
      TimelineRecorder rec;
      simulate(independent_forwards(k), UniformCostModel(ns_costs(d, 0)), &rec, nullptr, &hw);
      // Every F ends at d * max(1, k / C), rounded up to the nanosecond.
      const auto expected = static_cast<Tick>(std::ceil(static_cast<double>(d) * std::max(1.0, k / cores) - 1e-9));
      for (const OpRecord& r : rec.timeline.ops)
        if (r.op.kind == OpKind::F) {
          EXPECT_EQ(r.end, expected) << k << " ops on " << cores << " cores";
        }
    }
}

// A slower core: device 1's ops take 1.25x their cost model's time, device 0's their own;
// in a pool of one core the processor sharing applies on top of each one's own work.
TEST(Sharing, ADeviceSlowdownLengthensItsOpsOnly) {
  SharedHardware hw;
  hw.device_slowdown = {1.0, 1.25};
  TimelineRecorder rec;
  simulate(independent_forwards(2), UniformCostModel(ns_costs(1000, 2000)), &rec, nullptr, &hw);
  for (const OpRecord& r : rec.timeline.ops) {
    const Tick own = r.op.kind == OpKind::F ? 1000 : 2000;
    EXPECT_EQ(r.end - r.start, r.ref.device == 0 ? own : own * 5 / 4) << to_string(r.op) << " on " << r.ref.device;
  }
  // Two F of 1000 ns on one core, one of them on a core 1.5x slower: 2500 ns of work at half
  // speed; device 0's 1000 ends at 2000, device 1's last 500 alone, at 2500.
  SharedHardware one_core = pool_of(2, 1);
  one_core.device_slowdown = {1.0, 1.5};
  TimelineRecorder shared;
  simulate(independent_forwards(2), UniformCostModel(ns_costs(1000, 0)), &shared, nullptr, &one_core);
  for (const OpRecord& r : shared.timeline.ops)
    if (r.op.kind == OpKind::F) {
      EXPECT_EQ(r.end, r.ref.device == 0 ? 2000 : 2500) << r.ref.device;
    }
}

TEST(Sharing, AQueuedPoolRunsOpsAtFullSpeedOnCoresOfTheirOwnInArrivalOrder) {
  // 5 equal ops on 2 cores, queued: two run 0-1000, two 1000-2000, the last 2000-3000,
  // in device order (the order they reached the pool); each record starts when its op got
  // its core, and the device's busy time is that op's running time alone.
  SharedHardware hw = pool_of(5, 2);
  hw.pools[0].queue = true;
  TimelineRecorder rec;
  const SimResult r = simulate(independent_forwards(5), UniformCostModel(ns_costs(1000, 0)), &rec, nullptr, &hw);
  std::map<int, OpRecord> f;
  for (const OpRecord& o : rec.timeline.ops)
    if (o.op.kind == OpKind::F) f[o.ref.device] = o;
  const Tick start[] = {0, 0, 1000, 1000, 2000};
  for (int d = 0; d < 5; ++d) {
    EXPECT_EQ(f[d].start, start[d]) << d;
    EXPECT_EQ(f[d].end, start[d] + 1000) << d;
    EXPECT_EQ(r.devices[static_cast<std::size_t>(d)].busy, 1000) << d;
  }
  // The critical path explains the makespan from time 0: an op that waited for a core is
  // caused by the op whose end gave it the core, so each op on the path starts when the one
  // before it ends (device 4's F started at 2000 because a core freed then, not because of
  // a dependency: without the core as a cause the path would begin at 2000).
  std::map<std::pair<int, int>, OpRecord> by_ref;
  for (const OpRecord& o : rec.timeline.ops) by_ref[{o.ref.device, o.ref.index}] = o;
  ASSERT_GE(r.critical_path.size(), 2u);
  EXPECT_EQ(by_ref.at({r.critical_path.front().device, r.critical_path.front().index}).start, 0);
  for (std::size_t i = 1; i < r.critical_path.size(); ++i)
    EXPECT_EQ(by_ref.at({r.critical_path[i].device, r.critical_path[i].index}).start,
              by_ref.at({r.critical_path[i - 1].device, r.critical_path[i - 1].index}).end)
        << i;
  EXPECT_EQ(by_ref.at({r.critical_path.back().device, r.critical_path.back().index}).end, r.makespan);
  // With an interference curve the running ops are slowed by their neighbours only: one
  // neighbour at most on 2 cores.
  hw = pool_of(3, 2);
  hw.pools[0].queue = true;
  hw.pools[0].slowdown[static_cast<std::size_t>(OpKind::F)] = {1.0, 1.5, 3.0};
  TimelineRecorder slow;
  simulate(independent_forwards(3), UniformCostModel(ns_costs(1000, 0)), &slow, nullptr, &hw);
  std::map<int, Tick> end;
  for (const OpRecord& o : slow.timeline.ops)
    if (o.op.kind == OpKind::F) end[o.ref.device] = o.end;
  EXPECT_EQ(end[0], 1500);
  EXPECT_EQ(end[1], 1500);
  EXPECT_EQ(end[2], 2500);  // alone from 1500
}

// A core that alternates between devices: with more members than cores each op takes its
// kind's turn slowdown times its work, queued or time-sliced, on top of the rest; with as
// many cores as members (each thread on a core of its own) the factor does not apply.
TEST(Sharing, ATurnSlowdownLengthensOpsOnlyWhereMembersOutnumberTheCores) {
  const auto ends = [](SharedHardware hw, int devices) {
    TimelineRecorder rec;
    simulate(independent_forwards(devices), UniformCostModel(ns_costs(1000, 2000)), &rec, nullptr, &hw);
    std::map<std::pair<int, OpKind>, Tick> end;
    for (const OpRecord& o : rec.timeline.ops) end[{o.ref.device, o.op.kind}] = o.end;
    return end;
  };
  SharedHardware queued = pool_of(3, 2);
  queued.pools[0].queue = true;
  queued.pools[0].turn_slowdown[static_cast<std::size_t>(OpKind::F)] = 1.25;
  queued.pools[0].turn_slowdown[static_cast<std::size_t>(OpKind::B)] = 1.5;
  auto end = ends(queued, 3);
  // F of 1250 on devices 0 and 1 from 0; device 2's F, queued first, gets the core device
  // 0's F frees at 1250, and device 0's B (3000) the one device 1's frees.
  EXPECT_EQ((end[{0, OpKind::F}]), 1250);
  EXPECT_EQ((end[{1, OpKind::F}]), 1250);
  EXPECT_EQ((end[{2, OpKind::F}]), 2500);
  EXPECT_EQ((end[{0, OpKind::B}]), 1250 + 3000);
  // Time-sliced: three F of 1250 on 2 cores, each at 2/3 speed, end together.
  SharedHardware sliced = queued;
  sliced.pools[0].queue = false;
  end = ends(sliced, 3);
  EXPECT_EQ((end[{0, OpKind::F}]), 1875);
  EXPECT_EQ((end[{2, OpKind::F}]), 1875);
  // Two members on two cores: a core each, no turns.
  SharedHardware own = pool_of(2, 2);
  own.pools[0].queue = true;
  own.pools[0].turn_slowdown = queued.pools[0].turn_slowdown;
  end = ends(own, 2);
  EXPECT_EQ((end[{0, OpKind::F}]), 1000);
  EXPECT_EQ((end[{1, OpKind::B}]), 3000);
  // No core limit (a GPU's own SM partitions): no turns either.
  SharedHardware unlimited = pool_of(3, 0);
  unlimited.pools[0].turn_slowdown = queued.pools[0].turn_slowdown;
  end = ends(unlimited, 3);
  EXPECT_EQ((end[{2, OpKind::F}]), 1000);
}

TEST(Sharing, RemainingWorkCarriesOverWhenAnOpLeaves) {
  // One core, F of 1000 ns and F of 3000 ns together: each at half speed until the short
  // one ends at 2000 ns; the long one has done 1000 ns and runs its 2000 ns left alone.
  Schedule s = independent_forwards(2);
  UniformCostConfig c = ns_costs(1000, 0);
  class TwoLengths final : public testing_costs::ForwardingCostModel {
   public:
    using ForwardingCostModel::ForwardingCostModel;
    Tick compute_time(const Op& op, OpScale scale) const override {
      if (op.kind == OpKind::F) return op.pipeline == 0 ? 1000 : 3000;
      return base().compute_time(op, scale);
    }
  };
  const UniformCostModel base(c);
  const SharedHardware hw = pool_of(2, 1);
  TimelineRecorder rec;
  const SimResult r = simulate(s, TwoLengths(base), &rec, nullptr, &hw);
  std::map<int, Tick> end;
  for (const OpRecord& o : rec.timeline.ops)
    if (o.op.kind == OpKind::F) end[o.ref.device] = o.end;
  EXPECT_EQ(end[0], 2000);
  EXPECT_EQ(end[1], 4000);
  EXPECT_EQ(r.devices[0].busy + r.devices[1].busy, 6000);  // time each device's op was running
}

TEST(Sharing, AnInterferenceCurveLengthensOverlappedOpsByExactlyItsFactor) {
  SharedHardware hw = pool_of(3, 0);
  hw.pools[0].slowdown[static_cast<std::size_t>(OpKind::F)] = {1.0, 1.25, 1.5};
  TimelineRecorder rec;
  simulate(independent_forwards(3), UniformCostModel(ns_costs(4000, 0)), &rec, nullptr, &hw);
  for (const OpRecord& r : rec.timeline.ops)
    if (r.op.kind == OpKind::F) {  // 3 busy: 2 neighbours, s = 1.5
      EXPECT_EQ(r.end, 6000);
    }
  // The curve's last value holds past its end: 2 neighbours, s = 1.25.
  hw.pools[0].slowdown[static_cast<std::size_t>(OpKind::F)] = {1.0, 1.25};
  TimelineRecorder two;
  simulate(independent_forwards(3), UniformCostModel(ns_costs(4000, 0)), &two, nullptr, &hw);
  for (const OpRecord& r : two.timeline.ops)
    if (r.op.kind == OpKind::F) {
      EXPECT_EQ(r.end, 5000);
    }
}

// Two pipelines of two stages (devices 0 -> 2 and 1 -> 3), devices 0, 1 on node 0 and 2, 3
// on node 1: both forwards' messages leave node 0 at t = F.
Schedule two_pipelines_across_nodes() {
  Schedule s;
  s.name = "two-pipelines";
  s.num_devices = 4;
  s.num_stages = 2;
  s.num_pipelines = 2;
  s.placement = {{0, 2}, {1, 3}};
  s.ops = {{make_op(OpKind::F, 0, 0, 0), make_op(OpKind::B, 0, 0, 0)},
           {make_op(OpKind::F, 0, 0, 1), make_op(OpKind::B, 0, 0, 1)},
           {make_op(OpKind::F, 1, 0, 0), make_op(OpKind::B, 1, 0, 0)},
           {make_op(OpKind::F, 1, 0, 1), make_op(OpKind::B, 1, 0, 1)}};
  return s;
}

TEST(Sharing, TwoTransfersThroughOneNicEachGetHalfItsBandwidthAndEndTogether) {
  UniformCostConfig c = ns_costs(1000, 1000);
  c.link_latency = 100;
  c.link_bandwidth = 1e9;
  c.message_bytes = 5000;  // 5000 ns on the wire alone
  SharedHardware hw;
  hw.node_of_device = {0, 0, 1, 1};
  hw.nics_per_node = 1;
  TimelineRecorder rec;
  simulate(two_pipelines_across_nodes(), UniformCostModel(c), &rec, nullptr, &hw);
  ASSERT_EQ(rec.timeline.transfers.size(), 4u);
  for (const TransferRecord& t : rec.timeline.transfers) {
    if (t.from.device > 1) continue;  // the forward messages, node 0 -> node 1
    EXPECT_EQ(t.link_start, 1000);
    EXPECT_EQ(t.link_end, 1000 + 2 * 5000);  // half the NIC each: twice as long
    EXPECT_EQ(t.arrival, 1000 + 2 * 5000 + 100);
  }
  // With two NICs per node each has one of its own: as without sharing.
  hw.nics_per_node = 2;
  TimelineRecorder own;
  simulate(two_pipelines_across_nodes(), UniformCostModel(c), &own, nullptr, &hw);
  for (const TransferRecord& t : own.timeline.transfers)
    if (t.from.device <= 1) {
      EXPECT_EQ(t.link_end, 1000 + 5000);
    }
}

TEST(Sharing, MaxMinGivesAFlowTheShareItsOtherBottleneckLeaves) {
  // Devices 0, 1 on node 0; device 2 on node 1; device 3 on node 2. Flows 0 -> 2 and 1 -> 3
  // share node 0's NIC: half each; neither ingress is the bottleneck.
  UniformCostConfig c = ns_costs(1000, 1000);
  c.link_bandwidth = 1e9;
  c.message_bytes = 3000;
  SharedHardware hw;
  hw.node_of_device = {0, 0, 1, 2};
  TimelineRecorder rec;
  simulate(two_pipelines_across_nodes(), UniformCostModel(c), &rec, nullptr, &hw);
  for (const TransferRecord& t : rec.timeline.transfers)
    if (t.from.device <= 1) {
      EXPECT_EQ(t.link_end, 1000 + 6000);
    }
  // Backward messages 2 -> 0 and 3 -> 1 leave different nodes and enter node 0: half each.
  for (const TransferRecord& t : rec.timeline.transfers)
    if (t.from.device > 1) {
      EXPECT_EQ(t.link_end - t.link_start, 6000);
    }
}

// Two pipelines of two stages, one per node (devices 0, 1 on node 0; 2, 3 on node 1): each
// stage's GradSync is a collective across both nodes. Stage 1's starts at 3 us, stage 0's at
// 4 us, 10 us of work each. On one NIC per node they share it half and half from 4 us: stage 1
// does 1 us alone, the other 9 us at half speed (ends 22 us); stage 0 then has 1 us left alone
// (ends 23 us). On two NICs each has its own, as without sharing: 13 and 14 us.
TEST(Sharing, CollectivesAcrossNodesShareTheNicsWithEachOther) {
  Schedule s;
  s.name = "two-pipelines-two-nodes";
  s.num_devices = 4;
  s.num_stages = 2;
  s.num_pipelines = 2;
  s.placement = {{0, 1}, {2, 3}};
  for (const char* list : {"0F0 0B0 0GRADSYNC", "1F0 1B0 1GRADSYNC", "1:0F1 1:0B1 1:0GRADSYNC", "1:1F1 1:1B1 1:1GRADSYNC"}) {
    s.ops.emplace_back();
    std::istringstream in(list);
    for (std::string op; in >> op;) s.ops.back().push_back(*parse_op(op));
  }
  UniformCostConfig c = ns_costs(1000, 1000);
  c.link_bandwidth = 1e9;
  c.grad_bytes = 10'000;  // a 10 us allreduce of two
  const UniformCostModel model(c);
  auto ends = [&](int nics) {
    SharedHardware hw;
    hw.node_of_device = {0, 0, 1, 1};
    hw.nics_per_node = nics;
    TimelineRecorder rec;
    simulate(s, model, &rec, nullptr, &hw);
    std::map<Tick, Tick> out;  // start -> end
    for (const CollectiveRecord& r : rec.timeline.collectives) out[r.start] = r.end;
    return out;
  };
  EXPECT_EQ(ends(1), (std::map<Tick, Tick>{{3000, 22'000}, {4000, 23'000}}));
  EXPECT_EQ(ends(2), (std::map<Tick, Tick>{{3000, 13'000}, {4000, 14'000}}));
  TimelineRecorder fast;
  simulate(s, model, &fast);
  std::map<Tick, Tick> unshared;
  for (const CollectiveRecord& r : fast.timeline.collectives) unshared[r.start] = r.end;
  EXPECT_EQ(unshared, ends(2));
}

TEST(Sharing, OverlapSlowsComputeAndTheTransferBesideIt) {
  // Device 0: F0 then F1; F0's message goes out while F1 computes: both take 1.5x as long
  // while they overlap.
  UniformCostConfig c = ns_costs(2000, 0);
  c.link_bandwidth = 1e9;
  c.message_bytes = 1000;
  SharedHardware hw;
  hw.overlap_slowdown = 1.5;
  TimelineRecorder rec;
  simulate(lists({{"0F0", "0F1", "0B0", "0B1"}, {"1F0", "1F1", "1B0", "1B1"}}), UniformCostModel(c), &rec, nullptr, &hw);
  std::map<std::string, OpRecord> ops;
  for (const OpRecord& r : rec.timeline.ops) ops[to_string(r.op)] = r;
  // F1 starts at 2000 with the message on the wire: the message takes 1500 ns (ends 3500),
  // F1 does 1000 ns of work by then and its last 1000 ns alone: ends at 4500.
  EXPECT_EQ(ops["0F1"].start, 2000);
  EXPECT_EQ(ops["0F1"].end, 4500);
  EXPECT_EQ(rec.timeline.transfers.front().link_end, 3500);
}

TEST(Sharing, OverlappedGradientReductionIsNoLongerFree) {
  // A data-parallel pair: F B, a 10 ms non-blocking GradSync at 2 ms, then F B beside it.
  // With overlap 2, both devices' 2 ms of compute take 4 ms (2-6 ms) and the reduction does
  // 2 ms of its work by then and the other 8 ms alone: it ends at 14 ms, not 12.
  const Schedule s = testing_schedules::sync_pair();
  UniformCostConfig c = ns_costs(1'000'000, 1'000'000);
  c.grad_bytes = 10'000'000;
  c.link_bandwidth = 1e9;  // 10 ms allreduce
  SharedHardware hw;
  hw.overlap_slowdown = 2;
  TimelineRecorder rec;
  const SimResult r = simulate(s, UniformCostModel(c), &rec, nullptr, &hw);
  ASSERT_EQ(rec.timeline.collectives.size(), 1u);
  EXPECT_EQ(rec.timeline.collectives[0].start, 2'000'000);
  EXPECT_EQ(rec.timeline.collectives[0].end, 14'000'000);
  EXPECT_EQ(r.devices[0].last_end, 6'000'000);
  EXPECT_EQ(r.makespan, 14'000'000);
  // Without overlap's cost: 12 ms, as the fast path has it.
  EXPECT_EQ(simulate(s, UniformCostModel(c)).makespan, 12'000'000);
}

// Per-op start and end, by op: what the fast path and the shared path must agree on.
std::map<std::pair<int, int>, std::pair<Tick, Tick>> times(const Timeline& t) {
  std::map<std::pair<int, int>, std::pair<Tick, Tick>> out;
  for (const OpRecord& r : t.ops) out[{r.ref.device, r.ref.index}] = {r.start, r.end};
  return out;
}

// Costs for running every generator: F 1 us, B 2 us, messages that hold their link 300 ns.
UniformCostConfig with_links() {
  UniformCostConfig c = ns_costs(1000, 2000);
  c.link_latency = 70;
  c.link_bandwidth = 1e9;
  c.message_bytes = 300;
  return c;
}

TEST(Sharing, FactorsOfOneGiveTheFastPathsTimesForEveryGenerator) {
  const UniformCostModel model(with_links());
  for (const GeneratorInfo& g : generators()) {
    const Schedule s = testing_schedules::generated(std::string(g.name).c_str(), 4, 8, 2);
    TimelineRecorder fast;
    const SimResult a = simulate(s, model, &fast);
    // Every device in one pool with cores to spare, and every device a node of its own with
    // a NIC per device: every op and every transfer takes the shared path, none is slowed.
    SharedHardware hw = pool_of(s.num_devices, 0);
    hw.node_of_device.resize(static_cast<std::size_t>(s.num_devices));
    std::iota(hw.node_of_device.begin(), hw.node_of_device.end(), 0);
    hw.nics_per_node = s.num_devices;
    TimelineRecorder shared;
    const SimResult b = simulate(s, model, &shared, nullptr, &hw);
    EXPECT_EQ(a.makespan, b.makespan) << g.name;
    EXPECT_EQ(a.iteration_end, b.iteration_end) << g.name;
    EXPECT_EQ(times(fast.timeline), times(shared.timeline)) << g.name;
    for (std::size_t d = 0; d < a.devices.size(); ++d) EXPECT_EQ(a.devices[d].busy, b.devices[d].busy) << g.name;
    EXPECT_EQ(fast.timeline.transfers.size(), shared.timeline.transfers.size()) << g.name;
  }
}

TEST(Sharing, APoolAtOneFactorKeptLazilyEndsOpsWhereReratingEveryMemberDoes) {
  // Processor sharing alone is kept on a virtual clock with one finish event (O(log k) per
  // event); a curve of ones forces the general path, which re-rates every member. They agree
  // to the nanosecond of rounding on every op of every generator.
  const UniformCostModel model(with_links());
  for (const GeneratorInfo& g : generators())
    for (double cores : {1.0, 1.5, 3.0}) {
      const Schedule s = testing_schedules::generated(std::string(g.name).c_str(), 4, 8, 2);
      SharedHardware lazy = pool_of(s.num_devices, cores);
      SharedHardware general = lazy;
      general.pools[0].slowdown[static_cast<std::size_t>(OpKind::F)] = {1.0, 1.0};
      TimelineRecorder a, b;
      simulate(s, model, &a, nullptr, &lazy);
      simulate(s, model, &b, nullptr, &general);
      const auto x = times(a.timeline), y = times(b.timeline);
      ASSERT_EQ(x.size(), y.size()) << g.name;
      Tick worst = 0;
      for (const auto& [op, t] : x) {
        const auto& u = y.at(op);
        worst = std::max({worst, std::abs(t.first - u.first), std::abs(t.second - u.second)});
      }
      EXPECT_LE(worst, 2) << g.name << " on " << cores << " cores";
    }
}

TEST(Sharing, SameInputSameOutput) {
  SharedHardware hw = pool_of(4, 1.5);
  hw.pools[0].slowdown[static_cast<std::size_t>(OpKind::B)] = {1.0, 1.1, 1.3};
  hw.node_of_device = {0, 0, 1, 1};
  hw.overlap_slowdown = 1.2;
  UniformCostConfig c = ns_costs(1000, 2000);
  c.link_bandwidth = 1e8;
  c.message_bytes = 30000;
  const Schedule s = testing_schedules::generated("chimera", 4, 8, 2);
  TimelineRecorder x, y;
  const SimResult a = simulate(s, UniformCostModel(c), &x, nullptr, &hw);
  const SimResult b = simulate(s, UniformCostModel(c), &y, nullptr, &hw);
  EXPECT_EQ(a.makespan, b.makespan);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(times(x.timeline), times(y.timeline));
  // Sharing slows the run down, never speeds it up.
  EXPECT_GT(a.makespan, simulate(s, UniformCostModel(c)).makespan);
}

TEST(Sharing, ABrokenDescriptionIsAnInputError) {
  const Schedule s = independent_forwards(2);
  const UniformCostModel model(ns_costs(1000, 0));
  auto message = [&](const SharedHardware& hw) {
    try {
      simulate(s, model, nullptr, nullptr, &hw);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  SharedHardware out_of_range = pool_of(3, 1);
  EXPECT_THAT(message(out_of_range), HasSubstr("names device 2, but the schedule has devices 0..1"));
  SharedHardware twice = pool_of(2, 1);
  twice.pools.push_back(twice.pools[0]);
  EXPECT_THAT(message(twice), HasSubstr("device 0 is in pools 0 and 1"));
  SharedHardware negative = pool_of(2, -1);
  EXPECT_THAT(message(negative), HasSubstr("expected a finite number >= 0"));
  SharedHardware curve = pool_of(2, 0);
  curve.pools[0].slowdown[0] = {1.0, 0.0};
  EXPECT_THAT(message(curve), HasSubstr("slowdown for F holds 0.000000; expected a finite factor >= 0.1"));
  SharedHardware turns = pool_of(2, 1);
  turns.pools[0].turn_slowdown[static_cast<std::size_t>(OpKind::B)] = std::nan("");
  EXPECT_THAT(message(turns), HasSubstr("turn slowdown for B is nan; expected a finite factor >= 0.1"));
  SharedHardware nodes;
  nodes.node_of_device = {0};
  EXPECT_THAT(message(nodes), HasSubstr("1 devices have a node, the schedule has 2"));
  SharedHardware speeds;
  speeds.device_slowdown = {1.0};
  EXPECT_THAT(message(speeds), HasSubstr("1 devices have a speed, the schedule has 2"));
  speeds.device_slowdown = {1.0, 0.0};
  EXPECT_THAT(message(speeds), HasSubstr("device 1's slowdown is 0.000000; expected a finite factor >= 0.1"));
  SharedHardware overlap;
  overlap.overlap_slowdown = 0.5;
  EXPECT_THAT(message(overlap), HasSubstr("overlap slowdown"));
}

}  // namespace
}  // namespace pipesim
