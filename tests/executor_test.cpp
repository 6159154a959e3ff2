// The executor (executor/executor.hpp) on every generator: each op runs once, in an order
// the dependencies allow in measured time, with the weight versions the simulator predicts,
// and all activation memory is given back.
#include <gtest/gtest.h>

#include <map>

#include <algorithm>
#include <cmath>
#include <set>

#include <sched.h>

#include "core/cpu_affinity.hpp"
#include "core/error.hpp"
#include "cost_models/uniform.hpp"
#include "executor_helpers.hpp"
#include "schedules/dependencies.hpp"
#include "schedules/lowering.hpp"
#include "sim/metrics.hpp"
#include "schedules/op_text.hpp"
#include "sim/timeline.hpp"

namespace pipesim {
namespace {

using namespace testing_executor;

// Sends and receives in the lists (schedules/lowering.hpp): the same numbers as without them.
TEST(Executor, CommOpsCarryTheMessagesAndChangeNoNumber) {
  for (const char* name : {"1f1b", "zb-v"}) {
    SCOPED_TRACE(name);
    const Schedule s = make(name, 2, 4, 1);
    const MeasuredRun plain = run_schedule(s, tiny(), quick());
    const MeasuredRun lowered = run_schedule(add_send_recv(s), tiny(), quick());
    ASSERT_TRUE(plain.complete && lowered.complete);
    ASSERT_EQ(lowered.losses.size(), plain.losses.size());
    for (std::size_t i = 0; i < plain.losses.size(); ++i) EXPECT_EQ(lowered.losses[i].loss, plain.losses[i].loss);
  }
}

// Each device thread's CPU time (MeasuredRun::thread_cpu): within its compute ops at most
// their wall time (one compute thread per device), and in all at least that and its GradSync
// copies; each GradSync member's copies (MeasuredRun::sync_work) within its record.
TEST(Executor, ThreadCpuHoldsTheOpsAndWhatTheThreadDidBesides) {
  const Schedule s = make("amdp", 4, 4, 2);  // GradSyncs, optimizer steps, weight versions
  const MeasuredRun r = run_schedule(s, tiny(), quick());
  ASSERT_TRUE(r.complete);
  ASSERT_EQ(r.thread_cpu.size(), 4u);
  std::vector<double> wall(4, 0);
  for (const OpRecord& o : r.timeline.ops)
    if (is_compute(o.op.kind)) wall[static_cast<std::size_t>(o.ref.device)] += static_cast<double>(o.end - o.start) * 1e-9;
  for (std::size_t d = 0; d < 4; ++d) {
    const ThreadCpu& c = r.thread_cpu[d];
    EXPECT_GT(c.ops_s, 0) << d;
    EXPECT_LE(c.ops_s, c.total_s) << d;
    EXPECT_LE(c.ops_s, wall[d] + 1e-3) << d;  // the clocks' granularity aside
    EXPECT_GT(c.copies_s, 0) << d;
    EXPECT_LE(c.ops_s + c.copies_s, c.total_s + 1e-3) << d;
  }
  std::size_t members = 0;
  std::map<std::pair<int, int>, const OpRecord*> syncs;
  for (const OpRecord& o : r.timeline.ops)
    if (o.op.kind == OpKind::GradSync) syncs[{o.ref.device, o.ref.index}] = &o;
  for (const SyncWork& w : r.sync_work) {
    const auto it = syncs.find({w.member.device, w.member.index});
    ASSERT_NE(it, syncs.end()) << w.member.device << " " << w.member.index;
    EXPECT_GT(w.copy_out, 0);
    EXPECT_GT(w.copy_in, 0);
    EXPECT_LE(w.copy_out + w.copy_in, it->second->end - it->second->start);
    ++members;
  }
  EXPECT_EQ(members, syncs.size());  // every member copied out and back in
}

// validate pins device threads to cores (RunOptions::pin_cores): a pinned run computes the
// same numbers, and a core the process may not use is a warning of the run, not a failure.
TEST(Executor, PinnedThreadsComputeTheSameAndARefusedCoreIsAWarning) {
  const Schedule s = make("1f1b", 2, 4, 1);
  const MeasuredRun plain = run_schedule(s, tiny(), quick());
  RunOptions pinned = quick();
  pinned.pin_cores = usable_core_ids();
  ASSERT_FALSE(pinned.pin_cores.empty());
  const MeasuredRun on_cores = run_schedule(s, tiny(), pinned);
  ASSERT_TRUE(plain.complete && on_cores.complete);
  ASSERT_EQ(on_cores.losses.size(), plain.losses.size());
  for (std::size_t i = 0; i < plain.losses.size(); ++i) EXPECT_EQ(on_cores.losses[i].loss, plain.losses[i].loss);
  for (const std::string& w : on_cores.warnings) EXPECT_EQ(w.find("could not pin"), std::string::npos) << w;

  RunOptions refused = quick();
  refused.pin_cores = {CPU_SETSIZE - 1};  // no machine here has core 1023 online
  const MeasuredRun anywhere = run_schedule(s, tiny(), refused);
  ASSERT_TRUE(anywhere.complete);
  EXPECT_EQ(std::count(anywhere.warnings.begin(), anywhere.warnings.end(),
                       "could not pin a device thread to core " + std::to_string(CPU_SETSIZE - 1)),
            2);  // one per device
}

TEST(Executor, CoversEveryGenerator) {
  std::set<std::string> covered;
  for (const auto& c : every_generator()) covered.insert(c.name);
  for (const auto& g : generators()) EXPECT_TRUE(covered.count(std::string(g.name))) << g.name;
}

class EveryGenerator : public ::testing::TestWithParam<Case> {};

TEST_P(EveryGenerator, RunsEveryOpOnceInDependencyOrder) {
  const Case& c = GetParam();
  const Schedule s = make(c.name, c.p, c.m, c.iterations);
  const MeasuredRun run = run_schedule(s, tiny(), quick());
  ASSERT_TRUE(run.complete);

  // Every op exactly once.
  ASSERT_EQ(run.timeline.ops.size(), s.total_ops());
  const auto recs = by_ref(run.timeline);
  ASSERT_EQ(recs.size(), s.total_ops());
  for (const auto& [ref, r] : recs) {
    EXPECT_EQ(r.op, s.ops[static_cast<std::size_t>(ref.first)][static_cast<std::size_t>(ref.second)]);
    EXPECT_LE(r.start, r.end);
  }

  // Each device ran its list in order, and every consumer started after its producer ended
  // (after the message arrived, for one from another device).
  std::vector<DependencyProblem> problems;
  const DependencyGraph g = build_dependencies(s, problems);
  ASSERT_TRUE(problems.empty());
  auto rec = [&](GraphId id) { return recs.at({g.device_of(id), g.index_of(id)}); };
  for (int d = 0; d < s.num_devices; ++d)
    for (std::size_t i = 1; i < s.ops[static_cast<std::size_t>(d)].size(); ++i)
      if (s.ops[static_cast<std::size_t>(d)][i - 1].kind != OpKind::GradSync) {
        EXPECT_GE(recs.at({d, static_cast<int>(i)}).start, recs.at({d, static_cast<int>(i) - 1}).end);
      }
  for (const GraphId id : g.all())
    for (const GraphId p : g.preds_of(id))
      EXPECT_GE(rec(id).start, rec(p).end) << to_string(rec(id).op) << " vs " << to_string(rec(p).op);
  for (const TransferRecord& t : run.timeline.transfers) {
    const OpRecord& from = recs.at({t.from.device, t.from.index});
    const OpRecord& to = recs.at({t.to.device, t.to.index});
    EXPECT_NE(t.from.device, t.to.device);
    EXPECT_LE(from.end, t.ready);
    EXPECT_LE(t.ready, t.link_start);
    EXPECT_LE(t.link_start, t.link_end);
    EXPECT_LE(t.link_end, t.arrival);
    EXPECT_LE(t.arrival, to.start);
    EXPECT_GT(t.bytes, 0);
  }
  EXPECT_EQ(run.timeline.collectives.size(), g.collectives.size());

  // Activation memory really held comes back to zero, and something was held.
  for (const DeviceStats& d : run.result.devices) {
    EXPECT_EQ(d.final_activation_bytes, 0);
    EXPECT_GT(d.peak_activation_bytes, 0);
    EXPECT_GE(d.peak_activations, 1);
    EXPECT_GT(d.busy, 0);
    EXPECT_LE(d.busy, run.result.makespan);
  }

  // One finite loss per micro-batch (op) of the last stage, per pipeline.
  std::size_t last_forwards = 0;
  for (const auto& list : s.ops)
    for (const Op& op : list) last_forwards += op.kind == OpKind::F && op.stage == s.num_stages - 1;
  EXPECT_EQ(run.losses.size(), last_forwards);
  for (const LossRecord& l : run.losses) EXPECT_TRUE(std::isfinite(l.loss));
  EXPECT_EQ(run.iteration_loss.size(), static_cast<std::size_t>(s.iterations));

  // The simulator's metrics work on the measurement.
  const Metrics m = summarize(s, run.result);
  EXPECT_EQ(m.ops, s.total_ops());
  EXPECT_GT(m.makespan, 0);
  EXPECT_FALSE(m.critical_path.empty());
}

INSTANTIATE_TEST_SUITE_P(Generators, EveryGenerator, ::testing::ValuesIn(every_generator()), case_name);

// The versions the backend really used are the simulator's, op by op, and so is the
// staleness derived from them.
class VersionsMatchSimulator : public ::testing::TestWithParam<Case> {};

TEST_P(VersionsMatchSimulator, OpByOp) {
  const Case& c = GetParam();
  const Schedule s = make(c.name, c.p, c.m, c.iterations);
  TimelineRecorder sim;
  const SimResult predicted = simulate(s, UniformCostModel(UniformCostConfig{}), &sim);
  const MeasuredRun run = run_schedule(s, tiny(), quick());
  const auto measured = by_ref(run.timeline);
  int micro = 0, stale = 0;
  for (const OpRecord& p : sim.timeline.ops) {
    const OpRecord& m = measured.at({p.ref.device, p.ref.index});
    ASSERT_EQ(m.op, p.op);
    EXPECT_EQ(m.weight_version, p.weight_version) << to_string(p.op) << " on device " << p.ref.device;
    if (is_microbatch_op(p.op.kind)) {
      ++micro;
      stale += p.weight_version > 0;
    }
  }
  EXPECT_GT(micro, 0);
  if (c.iterations > 1) {
    EXPECT_GT(stale, 0) << "no op used an updated version: the test would not see a difference";
  }
  ASSERT_EQ(run.result.staleness.size(), predicted.staleness.size());
  for (std::size_t st = 0; st < predicted.staleness.size(); ++st) {
    const StageStaleness &a = run.result.staleness[st], &b = predicted.staleness[st];
    EXPECT_EQ(a.backwards, b.backwards);
    EXPECT_EQ(a.mismatched, b.mismatched);
    EXPECT_EQ(a.max_mismatch, b.max_mismatch);
    EXPECT_EQ(a.gradients, b.gradients);
    EXPECT_EQ(a.delay_sum, b.delay_sum);
    EXPECT_EQ(a.max_delay, b.max_delay);
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, VersionsMatchSimulator,
                         ::testing::Values(Case{"1f1b", 2, 3, 2}, Case{"chimera", 4, 4, 2}, Case{"amp", 2, 4, 2},
                                           Case{"amdp", 4, 4, 2}, Case{"pipedream", 2, 4, 3},
                                           Case{"pipedream-2bw", 2, 2, 3}, Case{"zb-h1", 2, 4, 2},
                                           Case{"interleaved", 2, 4, 2}, Case{"async-1f1b", 2, 3, 2}),
                         case_name);

// Stash and 2BW hold real older copies of the weights while micro-batches need them.
TEST(Executor, StashingHoldsRealWeightCopies) {
  const MeasuredRun stash = run_schedule(make("pipedream", 2, 4, 2), tiny(), quick());
  EXPECT_GT(stash.result.devices[0].peak_weight_versions, 1);
  const MeasuredRun current = run_schedule(make("1f1b", 2, 4, 2), tiny(), quick());
  for (const DeviceStats& d : current.result.devices) EXPECT_EQ(d.peak_weight_versions, 1);
  const MeasuredRun twobw = run_schedule(make("pipedream-2bw", 2, 2, 3), tiny(), quick());
  EXPECT_EQ(twobw.result.devices[0].peak_weight_versions, 2);
}

}  // namespace
}  // namespace pipesim
