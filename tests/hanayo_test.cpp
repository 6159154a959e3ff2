// Hanayo (schedules/generators/hanayo.cpp, spec §14.2, a reconstruction): the zig-zag
// placement, a complete and deadlock-free order, its closed forms with F = B and free links
// (bubble, peak activations), one copy of the weights, the op-count estimate and --waves.
// The properties every generator has (dependencies respected in time, memory back to
// zero, determinism) are checked on it by properties_test with the others.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "cli_runner.hpp"
#include "cost_models/uniform.hpp"
#include "generated.hpp"
#include "input_error.hpp"
#include "schedules/generator.hpp"
#include "schedules/op_text.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"

namespace pipesim {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;

using testing_schedules::device_rows;

ScheduleParams params(int p, int m, int waves, int iterations = 1) {
  ScheduleParams out = testing_schedules::shape(p, m, iterations);
  out.set("waves", waves);
  return out;
}

// F = B = t per full stage (a chunk op t/(2W)), free links, free optimizer; `activation`
// bytes per micro-batch on a full stage.
UniformCostModel equal_costs(Tick t, std::int64_t activation = 0) {
  UniformCostConfig cfg;
  cfg.stage = StageCosts{t, t, t / 2};
  cfg.activation_bytes = activation;
  return UniformCostModel(cfg);
}

TEST(Hanayo, ZigZagPlacementOfTwoWChunksPerDevice) {
  const Schedule s = generate("hanayo", params(4, 8, 2));
  EXPECT_EQ(s.num_stages, 16);
  EXPECT_EQ(s.num_pipelines, 1);
  EXPECT_EQ(s.chunks_per_device(), 4);
  EXPECT_THAT(s.placement[0], ElementsAre(0, 1, 2, 3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0));
  // W = 1 is the V of ZB-V.
  EXPECT_EQ(generate("hanayo", params(4, 8, 1)).placement, generate("zb-v", params(4, 8, 1)).placement);
}

// Small cases of the replay's order (hanayo.cpp), worked out by hand from its two rules.
TEST(Hanayo, OrderOfSmallCases) {
  EXPECT_THAT(device_rows(generate("hanayo", params(2, 4, 1))),
              ElementsAre("0F0 0F1 0F2 3F0 3B0 3F1 3B1 0B0 0F3 0B1 3F2 3B2 3F3 3B3 0B2 0B3 0OPT 3OPT",
                          "1F0 2F0 1F1 2F1 2B0 1B0 2B1 1B1 1F2 2F2 1F3 2F3 2B2 1B2 2B3 1B3 1OPT 2OPT"));
  EXPECT_THAT(device_rows(generate("hanayo", params(2, 2, 2))),
              ElementsAre("0F0 0F1 3F0 4F0 3F1 4F1 7F0 7B0 7F1 7B1 4B0 3B0 4B1 3B1 0B0 0B1 0OPT 3OPT 4OPT 7OPT",
                          "1F0 2F0 1F1 2F1 5F0 6F0 5F1 6F1 6B0 5B0 6B1 5B1 2B0 1B0 2B1 1B1 1OPT 2OPT 5OPT 6OPT"));
}

// Every F and B of every micro-batch and stage once, an OptStep per stage per iteration,
// nothing else; the schedule validates (placement, dependencies, no deadlock); the op-count
// estimate is the exact count.
TEST(Hanayo, EveryOpOnceAndValidOverAGrid) {
  for (int p : {1, 2, 3, 4, 5, 8})
    for (int m : {1, 2, 3, 5, 8, 13, 16})
      for (int waves : {1, 2, 3})
        for (int iterations : {1, 2}) {
          SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m) + " W=" + std::to_string(waves) +
                       " T=" + std::to_string(iterations));
          const ScheduleParams q = params(p, m, waves, iterations);
          const Schedule s = generate("hanayo", q);
          const ValidationReport report = validate(s);
          ASSERT_TRUE(report.ok()) << report.errors.front();
          std::map<std::tuple<OpKind, int, int>, int> count;
          for (int d = 0; d < p; ++d)
            for (const Op& op : s.ops[static_cast<std::size_t>(d)]) {
              EXPECT_EQ(s.placement[0][static_cast<std::size_t>(op.stage)], d) << to_string(op);
              ++count[{op.kind, op.stage, op.microbatch}];
            }
          const int stages = 2 * waves * p;
          EXPECT_EQ(count.size(), static_cast<std::size_t>(stages) * (2 * m * iterations + 1));
          for (const auto& [op, n] : count)
            EXPECT_EQ(n, std::get<0>(op) == OpKind::OptStep ? iterations : 1)
                << to_string(make_op(std::get<0>(op), std::get<1>(op), std::get<2>(op)));
          EXPECT_EQ(s.total_ops(), static_cast<std::size_t>(stages) * (2 * m + 1) * iterations);
          EXPECT_EQ(estimate_ops("hanayo", q), s.total_ops());
        }
}

// With F = B = t and free links, each device's idle is the ramp of p-1 chunk forwards at
// the start and p-1 chunk backwards at the end, 2(p-1)·t/(2W), when p divides m:
//   makespan = 2mt + (p-1)t/W,   bubble = (p-1) / (2Wm + p-1) on every device,
// the spec's "(D-1)/(2W·N + D-1)". Otherwise the last group of m mod p micro-batches leaves
// (2W-1)(p - m mod p)·t/W more. The peak is p micro-batches' activations (2W·p chunks) on
// every device once m >= 2p, never more.
TEST(Hanayo, BubbleAndPeakActivationsMatchTheClosedForms) {
  const Tick t = 12'000;                  // divisible by 2W for W <= 3
  const std::int64_t a = 12 << 20;        // one micro-batch's activations on a full stage
  for (int p : {1, 2, 3, 4, 5, 8})
    for (int m : {1, 2, 3, 4, 5, 8, 12, 16, 24, 32})
      for (int waves : {1, 2, 3}) {
        SCOPED_TRACE("p=" + std::to_string(p) + " m=" + std::to_string(m) + " W=" + std::to_string(waves));
        const SimResult r = simulate(generate("hanayo", params(p, m, waves)), equal_costs(t, a));
        const Tick extra = m % p == 0 ? 0 : (2 * waves - 1) * (p - m % p) * t / waves;
        EXPECT_EQ(r.makespan, 2 * m * t + (p - 1) * t / waves + extra);
        for (const DeviceStats& d : r.devices) {
          EXPECT_EQ(d.busy, 2 * m * t);
          if (m % p == 0) {  // idle / makespan = (p-1) / (2Wm + p-1), exactly
            EXPECT_EQ((r.makespan - d.busy) * (2 * waves * m + p - 1), r.makespan * (p - 1));
          }
          EXPECT_LE(d.peak_activation_bytes, p * a);
          if (m >= 2 * p) {
            EXPECT_EQ(d.peak_activation_bytes, p * a);
          }
        }
      }
}

// One model copy: each stage placed once, each device 2W chunks of 1/(2W) of a stage (M_θ),
// one version of each (synchronous: flushed every iteration).
TEST(Hanayo, OneCopyOfTheWeights) {
  for (int waves : {1, 2, 3}) {
    const Schedule s = generate("hanayo", params(4, 8, waves, 2));
    const SimResult r = simulate(s, equal_costs(12'000));
    ASSERT_EQ(s.placement.size(), 1u);
    for (int d = 0; d < s.num_devices; ++d) {
      EXPECT_EQ(static_cast<int>(s.replicas_on(d).size()), 2 * waves) << "device " << d;
      EXPECT_EQ(r.devices[static_cast<std::size_t>(d)].peak_weight_versions, 2 * waves) << "device " << d;
    }
    for (const StageStaleness& st : r.staleness) EXPECT_EQ(st.max_mismatch, 0);
  }
}

TEST(Hanayo, WavesIsItsSetting) {
  EXPECT_EQ(find_generator("hanayo").settings.size(), 1u);
  EXPECT_EQ(find_setting("waves").default_number, 2);
  EXPECT_EQ(generate("hanayo", ScheduleParams{}).num_stages, 16);  // p = 4, W = 2
  EXPECT_THAT(error_of("hanayo", params(4, 8, 0)), HasSubstr("hanayo: waves must be a positive integer, got 0"));
  EXPECT_THAT(error_of("hanayo", params(0, 8, 2)), HasSubstr("hanayo: p must be a positive integer, got 0"));

  using testing_cli::run;
  const auto one = run("schedule --schedule hanayo -p 2 -m 4 --waves 1 --format csv");
  EXPECT_EQ(one.code, 0) << one.out;
  EXPECT_EQ(one.out, run("schedule --schedule hanayo -p 2 -m 4 --waves 1 --format csv").out);  // reruns are identical
  const auto zero = run("schedule --schedule hanayo --waves 0");
  EXPECT_EQ(zero.code, 2);
  EXPECT_THAT(zero.out, HasSubstr("hanayo: waves must be a positive integer, got 0"));
  const auto other = run("schedule --schedule 1f1b --waves 2");
  EXPECT_EQ(other.code, 2);
  EXPECT_THAT(other.out, HasSubstr("--waves: not a setting of 1f1b (it is one of hanayo)"));
  const auto swept = run("sweep --help");
  EXPECT_THAT(swept.out, HasSubstr("--waves"));
}

}  // namespace
}  // namespace pipesim
