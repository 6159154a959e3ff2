// Weight versions, staleness and stashed-weight memory, measured by the engine.
#include <gtest/gtest.h>

#include "cost_models/uniform.hpp"
#include "schedules/op_text.hpp"
#include "sim/engine.hpp"
#include "sim/timeline.hpp"

namespace pipesim {
namespace {

// One device, one stage: F0 F1 B0 OPT B1 OPT -- micro-batch 1 straddles an update.
Schedule straddle(WeightPolicy policy) {
  Schedule s;
  s.num_devices = 1;
  s.num_stages = 1;
  s.microbatches = 1;
  s.iterations = 2;
  s.weight_policy = policy;
  s.placement = {{0}};
  s.ops.emplace_back();
  for (const char* t : {"0F0", "0F1", "0B0", "0OPT", "0B1", "0OPT"}) s.ops[0].push_back(*parse_op(t));
  return s;
}

std::vector<int> versions(const Timeline& t) {
  std::vector<int> out;
  for (const auto& r : t.ops)
    if (r.op.kind != OpKind::OptStep) out.push_back(r.weight_version);
  return out;
}

UniformCostModel costs() { return UniformCostModel(UniformCostConfig{}); }

TEST(Versions, CurrentPolicyMismatchesAndHasNoDelay) {
  TimelineRecorder rec;
  const SimResult r = simulate(straddle(WeightPolicy::Current), costs(), &rec);
  EXPECT_EQ(versions(rec.timeline), (std::vector<int>{0, 0, 0, 1}));  // F0 F1 B0 B1
  const StageStaleness& st = r.staleness.at(0);
  EXPECT_EQ(st.backwards, 2);
  EXPECT_EQ(st.mismatched, 1);
  EXPECT_EQ(st.max_mismatch, 1);
  EXPECT_EQ(st.gradients, 2);
  EXPECT_EQ(st.max_delay, 0);
  EXPECT_EQ(r.devices[0].peak_weight_versions, 1);
}

TEST(Versions, StashingRemovesMismatchButDelaysAndHoldsTwoVersions) {
  TimelineRecorder rec;
  const SimResult r = simulate(straddle(WeightPolicy::Stash), costs(), &rec);
  EXPECT_EQ(versions(rec.timeline), (std::vector<int>{0, 0, 0, 0}));
  const StageStaleness& st = r.staleness.at(0);
  EXPECT_EQ(st.mismatched, 0);
  EXPECT_EQ(st.max_delay, 1);  // B1's gradient (on w0) is applied by the update from w1
  EXPECT_EQ(st.delay_sum, 1);
  EXPECT_EQ(r.devices[0].peak_weight_versions, 2);  // w1 current, w0 stashed for micro-batch 1
}

TEST(Versions, TwoBWUsesThePreviousBatchVersion) {
  // Batches of one micro-batch: F0 B0 OPT F1 B1 OPT F2 B2 OPT; batch t uses W^(t-1).
  Schedule s = straddle(WeightPolicy::TwoBW);
  s.iterations = 3;
  s.ops[0].clear();
  for (const char* t : {"0F0", "0B0", "0OPT", "0F1", "0B1", "0OPT", "0F2", "0B2", "0OPT"}) s.ops[0].push_back(*parse_op(t));
  TimelineRecorder rec;
  const SimResult r = simulate(s, costs(), &rec);
  EXPECT_EQ(versions(rec.timeline), (std::vector<int>{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(r.staleness[0].mismatched, 0);
  EXPECT_EQ(r.staleness[0].max_delay, 1);
  EXPECT_EQ(r.devices[0].peak_weight_versions, 2);
}

TEST(Versions, IterationEndsAreRecorded) {
  UniformCostConfig c;
  c.stage.fwd = 1;
  c.stage.bwd = 2;
  const SimResult r = simulate(straddle(WeightPolicy::Current), UniformCostModel(c));
  ASSERT_EQ(r.iteration_end.size(), 2u);
  EXPECT_EQ(r.iteration_end[0], 4);  // F0 F1 B0 -> 1 + 1 + 2
  EXPECT_EQ(r.iteration_end[1], 6);
}

}  // namespace
}  // namespace pipesim
