// The executor's gaps between ops (executor/op_gap_probe.hpp): one gap per op after the
// first iteration of a run on one device, each positive, and only a CPU profile gets them.
// No bound on their size: that is a measurement, for docs/validation/, not a test.
#include <gtest/gtest.h>

#include "cost_models/catalog.hpp"
#include "executor/op_gap_probe.hpp"
#include "synthetic_profile.hpp"

namespace pipesim {
namespace {

TEST(OpGapProbe, OneGapPerOpAfterTheFirstIteration) {
  const TimingStats gaps = measure_op_gaps();
  EXPECT_EQ(gaps.repeats, (kOpGapIterations - 1) * (2 * kOpGapMicrobatches + 1));
  EXPECT_GT(gaps.min, 0);
  EXPECT_LE(gaps.min, gaps.median);
}

TEST(OpGapProbe, OnlyACpuProfileGetsThem) {
  Profile p = synthetic_profile(find_model("gpt-tiny"), {1}, exact_timing);
  p.backend = "cuda";
  EXPECT_FALSE(with_executor_gaps(p).executor.measured());
  p.backend = "cpu";
  EXPECT_TRUE(with_executor_gaps(p).executor.measured());
}

}  // namespace
}  // namespace pipesim
