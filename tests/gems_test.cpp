// GEMS-MAST (spec §11, schedules/generators/gems.cpp): the op order, Chimera Table 2's
// memory columns for GEMS (weights 2 M_θ, activations M_a) checked with the engine, the
// replay's bubble in integer ns against the closed form of the order, synchronous weights,
// and the constraints' messages. Also: the schedule is registered by its file alone (the
// CLI, the memory guard and the listing know it; cli_test / generator_metadata_test).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "generated.hpp"
#include "input_error.hpp"
#include "uniform_costs.hpp"
#include "schedules/generator.hpp"
#include "schedules/op_text.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"

namespace pipesim {
namespace {

using ::testing::HasSubstr;

ScheduleParams params(int p, int m, int iterations = 1) { return testing_schedules::shape(p, m, iterations); }
UniformCostModel costs(Tick fwd, Tick bwd) { return testing_costs::uniform_costs(fwd, bwd); }

std::string device_ops(const Schedule& s, int d) {
  std::string out;
  for (const Op& op : s.ops[static_cast<std::size_t>(d)]) out += (out.empty() ? "" : " ") + to_string(op);
  return out;
}

TEST(Gems, OpOrderTakesTurnsBetweenTheReplicas) {
  const Schedule s = generate("gems", params(4, 4));
  EXPECT_EQ(s.num_devices, 4);
  EXPECT_EQ(s.num_stages, 4);
  EXPECT_EQ(s.num_pipelines, 2);
  EXPECT_EQ(s.placement, (std::vector<std::vector<int>>{{0, 1, 2, 3}, {3, 2, 1, 0}}));
  EXPECT_EQ(device_ops(s, 0), "0F0 0B0 1:3F1 1:3B1 0F2 0B2 1:3F3 1:3B3 0GRADSYNC 1:3GRADSYNC 0OPT 1:3OPT");
  EXPECT_EQ(device_ops(s, 3), "3F0 3B0 1:0F1 1:0B1 3F2 3B2 1:0F3 1:0B3 1:0GRADSYNC 3GRADSYNC 1:0OPT 3OPT");
  EXPECT_EQ(device_ops(s, 2), "2F0 2B0 1:1F1 1:1B1 2F2 2B2 1:1F3 1:1B3 1:1GRADSYNC 2GRADSYNC 1:1OPT 2OPT");
}

TEST(Gems, ValidOverAGridWithEveryOpOnce) {
  for (int p : {2, 4, 6, 8})
    for (int m : {2, 4, 6, 16})
      for (int t : {1, 3}) {
        const Schedule s = generate("gems", params(p, m, t));
        const ValidationReport r = validate(s);
        EXPECT_TRUE(r.ok()) << "p=" << p << " m=" << m << ": " << (r.ok() ? "" : r.errors.front());
        // F and B per stage and micro-batch, a GradSync and an OptStep per replica and iteration.
        EXPECT_EQ(s.total_ops(), static_cast<std::size_t>(p * (2 * m + 4) * t));
        EXPECT_EQ(estimate_ops("gems", params(p, m, t)), s.total_ops());
      }
}

// Chimera Table 2, GEMS row: weights 2 M_θ (two stage replicas on every worker) and
// activations M_a (one micro-batch held at a time), for t_B = t_F and t_B = 2 t_F.
TEST(Gems, Table2MemoryTwoReplicasOneActivation) {
  for (int p : {2, 4, 8})
    for (const Tick bwd : {1000, 2000}) {
      const SimResult r = simulate(generate("gems", params(p, 8, 2)), costs(1000, bwd));
      for (const DeviceStats& d : r.devices) {
        EXPECT_EQ(d.peak_weight_versions, 2) << "p=" << p;
        EXPECT_EQ(d.peak_activations, 1) << "p=" << p;
        EXPECT_EQ(d.final_activation_bytes, 0);
      }
    }
}

// The replay's makespan in integer ns: per pair of micro-batches (one per replica) (p+1)
// (t_F + t_B) when t_F = t_B, the last pair 3p + 1 slots; busy 2m slots per worker. So the
// bubble ratio idle/makespan is exactly 1 - 2m / ((m/2 - 1)(2p + 2) + 3p + 1), which tends
// to (p-1)/(p+1) (Chimera's Table 2 gives ≈(D-1)/(D+½): see docs/schedules.md).
TEST(Gems, BubbleOfTheOrderWithEqualTimes) {
  const Tick t = 1000;
  for (int p : {2, 4, 6, 8})
    for (int m : {2, 4, 8, 32}) {
      const Schedule s = generate("gems", params(p, m));
      const SimResult r = simulate(s, costs(t, t));
      const Tick slots = (m / 2 - 1) * (2 * p + 2) + 3 * p + 1;
      EXPECT_EQ(r.makespan, slots * t) << "p=" << p << " m=" << m;
      const Metrics metrics = summarize(s, r);
      EXPECT_EQ(metrics.idle, static_cast<Tick>(p) * (slots - 2 * m) * t);
    }
  // Many micro-batches: the bubble approaches (p-1)/(p+1) from above.
  const Schedule s = generate("gems", params(4, 512));
  const double ratio = summarize(s, simulate(s, costs(t, t))).bubble_ratio;
  EXPECT_GT(ratio, 3.0 / 5.0);
  EXPECT_LT(ratio, 3.0 / 5.0 + 0.002);
}

// With flushes, each iteration takes the single-iteration makespan (the next one starts
// at worker 0 once the last backward has reached worker p-1 and the gradients are synced).
TEST(Gems, SynchronousIterationsNeverStale) {
  const Tick t = 1000;
  const Schedule s = generate("gems", params(4, 8, 3));
  const Metrics metrics = summarize(s, simulate(s, costs(t, t)));
  EXPECT_EQ(metrics.time_per_iteration, ((8 / 2 - 1) * (2 * 4 + 2) + 3 * 4 + 1) * t);
  EXPECT_EQ(metrics.staleness.max_mismatch, 0);
  EXPECT_EQ(metrics.staleness.max_delay, 0);
}

TEST(Gems, ConstraintsNameTheRuleAndTheValues) {
  EXPECT_EQ(error_of("gems", params(3, 8)),
            "gems: p must be even (got p=3, m=8)");
  EXPECT_EQ(error_of("gems", params(4, 7)), "gems: m must be even (got p=4, m=7)");
  // Non-positive values are the frame's message, as for every generator.
  EXPECT_EQ(error_of("gems", params(4, -3)), "gems: m must be a positive integer, got -3");
  EXPECT_EQ(error_of("gems", params(4, 2)), "");
}

}  // namespace
}  // namespace pipesim
