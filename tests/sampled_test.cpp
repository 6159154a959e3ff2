// Prediction intervals: the sampling cost model (cost_models/sampled.hpp) and the
// Monte-Carlo loop (assess/prediction_interval.hpp) on the committed gpt-small CPU profile:
// the quantile function's knots, a degenerate distribution giving the plain prediction,
// percentiles of a known distribution, determinism per seed, and the transfers' draws.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "assess/prediction_interval.hpp"
#include "cost_models/sampled.hpp"
#include "schedules/generator.hpp"
#include "sim/metrics.hpp"

namespace pipesim {
namespace {

const std::string kProfile = std::string(PIPESIM_TEST_DATA) + "/../../docs/validation/gpt-small-cpu-profile.json";

ProfiledCostConfig config_of(Profile p) {
  ProfiledCostConfig c;
  c.profile = std::move(p);
  c.source = "gpt-small-cpu-profile.json";
  c.micro_batch_size = 1;
  return c;
}

// Every timed measurement of `p` rewritten by `f`.
template <typename F>
Profile with_every_timing(Profile p, F f) {
  for (OptimizerTimes* o : {&p.block_optimizer, &p.embedding_optimizer, &p.head_norm_optimizer, &p.head_weight_optimizer}) {
    f(o->sgd);
    f(o->adam);
  }
  for (MicroBatchProfile& mb : p.micro_batches)
    for (PassProfile* pass : {&mb.block, &mb.embedding, &mb.head})
      for (TimingStats* t : {&pass->forward, &pass->input_grad, &pass->weight_grad}) f(*t);
  for (LinkSample& s : p.link.samples) f(s.time);
  if (p.gradient_copies.measured()) {
    f(p.gradient_copies.copy_out);
    f(p.gradient_copies.copy_in);
  }
  return p;
}

// `p` with gradient copies of a stage of 2 blocks: out 40 us, in 20 us at the median, their
// repeats spread 0.6x .. 1.6x (the CPU's copies in a pipeline: 1.5-4x the probe's).
Profile with_copies(Profile p) {
  p.gradient_copies.parameters = 2 * p.parameters.block;
  const auto spread = [](double median) {
    return summarize_timings({0.6 * median, 0.8 * median, median, median, 1.2 * median, 1.6 * median});
  };
  p.gradient_copies.copy_out = spread(40e-6);
  p.gradient_copies.copy_in = spread(20e-6);
  return p;
}

// One device running one forward: its makespan is that op's duration.
Schedule single_forward() {
  Schedule s;
  s.name = "one-forward";
  s.num_devices = 1;
  s.num_stages = 1;
  s.microbatches = 1;
  s.placement = {{0}};
  s.ops = {{make_op(OpKind::F, 0, 0)}};
  return s;
}

Schedule one_f_one_b(int p, int m) {
  ScheduleParams params;
  params.p = p;
  params.m = m;
  return generate("1f1b", params);
}

TEST(TimingQuantile, PassesThroughTheFiveSummaryPointsAndIsLinearBetween) {
  const TimingStats t{/*median*/ 5, /*p10*/ 3, /*p90*/ 9, /*min*/ 1, /*max*/ 13, 10, {}};
  EXPECT_DOUBLE_EQ(timing_quantile(t, 0.0), 1);
  EXPECT_DOUBLE_EQ(timing_quantile(t, 0.05), 2);
  EXPECT_DOUBLE_EQ(timing_quantile(t, 0.1), 3);
  EXPECT_DOUBLE_EQ(timing_quantile(t, 0.3), 4);
  EXPECT_DOUBLE_EQ(timing_quantile(t, 0.5), 5);
  EXPECT_DOUBLE_EQ(timing_quantile(t, 0.7), 7);
  EXPECT_DOUBLE_EQ(timing_quantile(t, 0.9), 9);
  EXPECT_DOUBLE_EQ(timing_quantile(t, 0.95), 11);
  EXPECT_DOUBLE_EQ(timing_quantile(t, 1.0), 13);
}

TEST(RepeatSpread, IsTheMedianRelativeP10ToP90WidthOfTheBlockPasses) {
  Profile p = read_profile_file(kProfile);
  p.micro_batches.resize(1);
  p.micro_batches[0].block.forward = {10, 9, 11, 8, 12, 5, {}};     // 0.2
  p.micro_batches[0].block.input_grad = {10, 8, 12, 8, 12, 5, {}};  // 0.4
  p.micro_batches[0].block.weight_grad = {10, 7, 16, 7, 16, 5, {}};  // 0.9
  EXPECT_DOUBLE_EQ(repeat_spread(p), 0.4);
}

TEST(SampledCostModel, ADegenerateDistributionGivesThePlainPrediction) {
  const ProfiledCostModel plain(config_of(read_profile_file(kProfile)));
  const ProfiledCostModel degenerate(config_of(with_every_timing(read_profile_file(kProfile), [](TimingStats& t) {
    t.min = t.p10 = t.p90 = t.max = t.median;
  })));
  const Schedule s = one_f_one_b(4, 8);
  Simulator simulator;
  const Metrics expected = summarize(s, simulator.run(s, plain));
  for (std::uint64_t seed : {0ull, 7ull, 123456789ull}) {
    const PredictionInterval one = predict_interval(simulator, s, degenerate, {1, seed, 0, {}});
    EXPECT_EQ(one.time_per_iteration.p50, static_cast<double>(expected.time_per_iteration));
    EXPECT_EQ(one.time_per_iteration.p5, one.time_per_iteration.p95);
    EXPECT_EQ(one.bubble_ratio.p50, expected.bubble_ratio);
    const SampledCostModel draw(degenerate, seed, 3);
    for (const auto& ops : s.ops) {
      for (const Op& op : ops) {
        if (!is_compute(op.kind)) continue;
        EXPECT_EQ(draw.compute_time(op, scale_of(s)), plain.compute_time(op, scale_of(s)));
      }
    }
    EXPECT_EQ(draw.transfer(0, 1, 65536).occupancy, plain.transfer(0, 1, 65536).occupancy);
    EXPECT_EQ(draw.allreduce_time(2, 1 << 20), plain.allreduce_time(2, 1 << 20));
  }
}

// A GradSync member's work: one draw of its copies per (stage, pipeline) and draw, between
// the copies' fastest and slowest repeats, the same in every iteration; none without copies.
TEST(SampledCostModel, AGradSyncMembersWorkIsDrawnFromItsCopies) {
  const ProfiledCostModel none(config_of(read_profile_file(kProfile)));
  EXPECT_EQ(SampledCostModel(none, 1, 0).grad_sync_work(grad_sync(0), OpScale{1, 1, 2}), 0);
  const ProfiledCostModel costs(config_of(with_copies(read_profile_file(kProfile))));
  const OpScale two{1, 1, 2};
  const auto expected = static_cast<double>(costs.grad_sync_work(grad_sync(1), two));
  ASSERT_GT(expected, 0);
  std::set<Tick> seen;
  for (std::uint64_t k = 0; k < 40; ++k) {
    const SampledCostModel draw(costs, 5, k);
    const Tick w = draw.grad_sync_work(grad_sync(1), two);
    EXPECT_EQ(w, draw.grad_sync_work(grad_sync(1), two));  // pure
    EXPECT_GE(static_cast<double>(w), 0.6 * expected / 1.0333 - 1) << k;  // the fastest repeats' share of the mean
    EXPECT_LE(static_cast<double>(w), 1.6 * expected / 1.0333 + 1) << k;
    seen.insert(w);
  }
  EXPECT_GT(seen.size(), 20u);
}

// With the copies' sum (CollectiveStyle::MemberThreads): the part after the sum is drawn with
// the whole work (never more than it), and the collective from the sum's repeats.
TEST(SampledCostModel, TheSumAndTheCopyInAreDrawnFromTheirRepeats) {
  Profile p = with_copies(read_profile_file(kProfile));
  p.gradient_copies.sum = summarize_timings({18e-6, 19e-6, 20e-6, 20e-6, 24e-6, 40e-6});
  const ProfiledCostModel costs(config_of(p));
  ASSERT_EQ(costs.collective_style(), CostModel::CollectiveStyle::MemberThreads);
  const OpScale two{1, 1, 2};
  const std::int64_t bytes = costs.grad_bytes(grad_sync(1), two);
  const auto mean_sum = static_cast<double>(costs.allreduce_time(2, bytes));
  std::set<Tick> sums;
  for (std::uint64_t k = 0; k < 40; ++k) {
    const SampledCostModel draw(costs, 5, k);
    EXPECT_EQ(draw.collective_style(), CostModel::CollectiveStyle::MemberThreads);
    const Tick after = draw.grad_sync_work_after(grad_sync(1), two), whole = draw.grad_sync_work(grad_sync(1), two);
    EXPECT_GT(after, 0);
    EXPECT_LT(after, whole);
    const Tick sum = draw.allreduce_time(2, bytes);
    EXPECT_EQ(sum, draw.allreduce_time(2, bytes));  // pure
    EXPECT_GE(static_cast<double>(sum), mean_sum * 18 / 23.5 - 1) << k;  // the repeats' range over their mean
    EXPECT_LE(static_cast<double>(sum), mean_sum * 40 / 23.5 + 1) << k;
    sums.insert(sum);
  }
  EXPECT_GT(sums.size(), 10u);
}

// Central 80 % of the repeats at the median, tails below and above: the median of many
// single-op makespans is the op's profiled time to the nanosecond, and the 5th and 95th
// percentiles sit where the linear tails put them.
TEST(PredictionInterval, PercentilesOfASingleOpFollowItsMeasuredDistribution) {
  const ProfiledCostModel costs(config_of(with_every_timing(read_profile_file(kProfile), [](TimingStats& t) {
    t.p10 = t.p90 = t.median;
    t.min = 0.5 * t.median;
    t.max = 1.5 * t.median;
  })));
  const Schedule s = single_forward();
  const double median = static_cast<double>(costs.compute_time(s.ops[0][0], scale_of(s)));
  Simulator simulator;
  const PredictionInterval r = predict_interval(simulator, s, costs, {20001, 42, 0, {}});
  EXPECT_NEAR(r.time_per_iteration.p50, median, 1.0);
  // u = 0.05 lies halfway down the lower tail: 0.75 x median (and 1.25 x at 0.95); the
  // standard error of an empirical 5th percentile of 20001 uniform draws is 0.0015 in u.
  EXPECT_NEAR(r.time_per_iteration.p5 / median, 0.75, 0.02);
  EXPECT_NEAR(r.time_per_iteration.p95 / median, 1.25, 0.02);
  EXPECT_EQ(r.bubble_ratio.p5, 0.0);  // one device, always busy
  EXPECT_TRUE(r.contains(static_cast<Tick>(median)));
  EXPECT_FALSE(r.contains(static_cast<Tick>(0.6 * median)));
  EXPECT_FALSE(r.contains(static_cast<Tick>(1.4 * median)));
}

// The machine's speed per draw (validate's machine_draws): row k's device speeds in draw k,
// so with ops that never vary the interval is the rows' range.
TEST(PredictionInterval, MachineSpeedOfEachDrawIsItsRow) {
  const ProfiledCostModel costs(config_of(with_every_timing(read_profile_file(kProfile), [](TimingStats& t) {
    t.p10 = t.p90 = t.min = t.max = t.median;
    t.quantiles.clear();
  })));
  const Schedule s = single_forward();
  const double plain = static_cast<double>(costs.compute_time(s.ops[0][0], scale_of(s)));
  SharedHardware hardware;
  hardware.device_slowdown = {1.0};
  Simulator simulator;
  const PredictionInterval still =
      predict_interval(simulator, s, costs, {2001, 7, 0, std::vector<std::vector<double>>(2001, {1.0})}, &hardware);
  EXPECT_EQ(still.time_per_iteration.p5, plain);
  EXPECT_EQ(still.time_per_iteration.p95, plain);
  std::vector<std::vector<double>> rows;  // x1.0 .. x1.5, evenly
  for (int k = 0; k <= 2000; ++k) rows.push_back({1.0 + 0.5 * (2000 - k) / 2000.0});
  const PredictionInterval moved = predict_interval(simulator, s, costs, {2001, 7, 0, rows}, &hardware);
  EXPECT_NEAR(moved.time_per_iteration.p5 / plain, 1.025, 1e-3);
  EXPECT_NEAR(moved.time_per_iteration.p50 / plain, 1.25, 1e-3);
  EXPECT_NEAR(moved.time_per_iteration.p95 / plain, 1.475, 1e-3);
}

TEST(PredictionInterval, IsTheSameForASeedAndDiffersBetweenSeeds) {
  const ProfiledCostModel costs(config_of(read_profile_file(kProfile)));
  const Schedule s = one_f_one_b(4, 8);
  Simulator simulator;
  const PredictionInterval a = predict_interval(simulator, s, costs, {50, 1, 0, {}});
  const PredictionInterval again = predict_interval(simulator, s, costs, {50, 1, 0, {}});
  Simulator fresh;
  const PredictionInterval elsewhere = predict_interval(fresh, s, costs, {50, 1, 0, {}});
  const PredictionInterval b = predict_interval(simulator, s, costs, {50, 2, 0, {}});
  for (const PredictionInterval* x : {&again, &elsewhere}) {
    EXPECT_EQ(x->time_per_iteration.p5, a.time_per_iteration.p5);
    EXPECT_EQ(x->time_per_iteration.p50, a.time_per_iteration.p50);
    EXPECT_EQ(x->time_per_iteration.p95, a.time_per_iteration.p95);
    EXPECT_EQ(x->bubble_ratio.p50, a.bubble_ratio.p50);
  }
  EXPECT_NE(b.time_per_iteration.p50, a.time_per_iteration.p50);
  EXPECT_LT(a.time_per_iteration.p5, a.time_per_iteration.p95);  // the profile's repeats do spread
  EXPECT_LE(a.time_per_iteration.p10, a.time_per_iteration.p50);
  EXPECT_LE(a.time_per_iteration.p50, a.time_per_iteration.p90);
}

TEST(SampledCostModel, EveryOpGetsItsOwnDrawAndEveryDrawItsOwnDurations) {
  const ProfiledCostModel costs(config_of(read_profile_file(kProfile)));
  const Schedule s = one_f_one_b(2, 16);
  const SampledCostModel draw(costs, 9, 0), same(costs, 9, 0), next(costs, 9, 1);
  std::set<Tick> forwards;
  int differ = 0;
  for (const Op& op : s.ops[0]) {
    if (op.kind != OpKind::F) continue;
    const Tick t = draw.compute_time(op, scale_of(s));
    EXPECT_EQ(t, same.compute_time(op, scale_of(s)));  // pure: the same question, the same answer
    forwards.insert(t);
    differ += t != next.compute_time(op, scale_of(s));
  }
  EXPECT_GT(forwards.size(), 12u);  // 16 forwards of one stage: (almost) all different
  EXPECT_GT(differ, 12);
  // Each directed link has its own speed in a draw.
  int links_differ = 0;
  for (std::uint64_t k = 0; k < 20; ++k) {
    const SampledCostModel d(costs, 9, k);
    links_differ += d.transfer(0, 1, 65536).latency != d.transfer(1, 0, 65536).latency;
  }
  EXPECT_GT(links_differ, 15);
}

}  // namespace
}  // namespace pipesim
