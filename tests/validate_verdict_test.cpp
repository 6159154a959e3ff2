// validate's conditions and verdict (tools/validate_verdict.hpp): when the machine's load or
// the profile's repeat spread make a comparison meaningless, and the tolerance's bounds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tools/validate_core_speeds.hpp"
#include "tools/validate_core_use.hpp"
#include "tools/validate_verdict.hpp"

namespace pipesim {
namespace {

OpRecord compute_op(Tick start, Tick end, OpKind kind = OpKind::F) {
  OpRecord r;
  r.op.kind = kind;
  r.start = start;
  r.end = end;
  return r;
}

// Ops counted at most `cores` at once, clipped to the span; messages and collectives are
// not compute.
TEST(CoreUse, OpsFillTheCoresAtMostCoresAtOnce) {
  Timeline t;
  t.ops = {compute_op(0, 60), compute_op(10, 50), compute_op(20, 40, OpKind::B)};
  // [0,10) 1, [10,20) 2, [20,40) 3 -> 2, [40,50) 2, [50,60) 1, [60,100) 0: 100 of 200.
  EXPECT_DOUBLE_EQ(core_use(t, 0, 100, 2), 0.5);
  EXPECT_DOUBLE_EQ(core_use(t, 0, 100, 1), 0.6);   // one core: busy from 0 to 60
  EXPECT_DOUBLE_EQ(core_use(t, 20, 40, 2), 1.0);   // three ran: both cores full
  t.ops.push_back(compute_op(90, 150, OpKind::OptStep));  // 10 of it inside [0, 100)
  t.ops.push_back(compute_op(60, 100, OpKind::SendF));    // a message: no core
  EXPECT_DOUBLE_EQ(core_use(t, 0, 100, 2), 0.55);
  EXPECT_DOUBLE_EQ(core_use(t, 100, 100, 2), 0.0);  // an empty span
  EXPECT_DOUBLE_EQ(core_use(Timeline{}, 0, 100, 2), 0.0);
}

TEST(CoreUse, WarnsWhenTheRunComputedLessThanPredictedByMoreThanTheTolerance) {
  EXPECT_EQ(core_use_warning("amdp", {2, 0.99, 0.95}, 0.05), "");
  EXPECT_EQ(core_use_warning("amdp", {2, 0.99, 1.0}, 0.05), "");  // more than predicted: not this
  EXPECT_EQ(core_use_warning("amdp", {2, 0.9923, 0.8889}, 0.05),
            "amdp's cores computed 88.89 % of the time, predicted 99.23 %: for the rest they were idle, in "
            "GradSync's copies (as predicted there) or busy outside the devices' ops (message hand-offs, wake-ups, "
            "GradSync's sum, other programs), which the simulator charges to no core (docs/shared-hardware.md)");
  CoreUse use{2, 0.9923, 0.8889};
  use.profile_turns[static_cast<std::size_t>(OpKind::F)] = 1.034;
  use.profile_turns[static_cast<std::size_t>(OpKind::OptStep)] = 1.166;
  use.turns[static_cast<std::size_t>(OpKind::OptStep)] = 1.166;
  EXPECT_EQ(core_use_line("amdp", 4, use),
            "amdp: core use (4 device threads on 2 cores): predicted 99.23 %, measured 88.89 % of the cores' "
            "time in the counted iterations;\n  an op taking turns on the cores: F x1.034, B x1.000, OPT "
            "x1.166 in the profile, F x1.000, B x1.000, OPT x1.166 predicted (beyond its noise, less the "
            "interference curve's part)");
  // (total, ops, copies): 0.1 + 0.3 + 0 outside of 3.5 (the third thread's clocks overlap), 0.05 + 0.1 copies.
  const ThreadShares shares = thread_shares({{1.0, 0.85, 0.05}, {2.0, 1.6, 0.1}, {0.5, 0.6, 0}});
  EXPECT_DOUBLE_EQ(shares.copies, 0.15 / 3.5);
  EXPECT_DOUBLE_EQ(shares.outside_ops, 0.4 / 3.5);
  EXPECT_DOUBLE_EQ(shares.ops_s, 3.05);
  EXPECT_DOUBLE_EQ(shares.total_s, 3.5);
  use.copies = shares.copies;
  use.outside_ops = shares.outside_ops;
  EXPECT_THAT(core_use_line("amdp", 4, use),
              testing::EndsWith(";\n  the device threads spent 4.29 % of their CPU time in GradSync's copies (on their "
                                "core in the simulation) and 11.43 % outside their ops and those (on no core in the "
                                "simulation)"));
  EXPECT_THAT(core_use_warning("amdp", use, 0.05),
              testing::HasSubstr("which the simulator charges to no core (the device threads' own share: 11.43 % of "
                                 "their CPU time) (docs/shared-hardware.md)"));
  // The ops' CPU time over the run, where measured: the simulated pools' work and the threads' clocks.
  use.ops_cpu_predicted_s = 12.69;
  use.ops_cpu_measured_s = 13.9359;
  EXPECT_THAT(
      core_use_line("amdp", 4, use),
      testing::EndsWith("outside their ops and those (on no core in the simulation);\n  the ops' CPU time over "
                        "the run: predicted 12.690 s, measured 13.936 s (the device threads' clocks, +9.82 %)"));
  // With the runs' spans, as shares of the cores' time (2 cores); with all the threads' time, theirs too.
  use.span_predicted_s = 6.35;
  use.span_measured_s = 7.2;
  use.threads_cpu_measured_s = 14.1;
  EXPECT_THAT(core_use_line("amdp", 4, use),
              testing::EndsWith("the ops' CPU time over the run: predicted 12.690 s (99.92 % of the cores' time), "
                                "measured 13.936 s (96.78 %; the device threads' clocks, +9.82 %); the device threads "
                                "had 97.92 % of the cores' time"));
  EXPECT_EQ(thread_shares({}).outside_ops, -1);
  EXPECT_EQ(thread_shares({{0, 0, 0}}).copies, -1);
}

using testing::ElementsAre;
using testing::HasSubstr;
using testing::IsEmpty;

TEST(ValidityWarnings, LoadBeforeTheRunsAboveCoresMinusAHalf) {
  EXPECT_THAT(validity_warnings({2, 1.4, 1.4, 2, 1, {}}, 0.01, 0.05), IsEmpty());
  const auto w = validity_warnings({2, 1.8, 1.0, 2, 1, {}}, 0.01, 0.05);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "machine load 1.80 before the runs on 2 cores (above 1.5): other work shared the cores, so the "
                  "measured times say little about the schedule");
}

// The 1-minute average after T seconds of k threads from a load `before`: before x d + k x (1 - d).
double average_after(double before, double threads, double seconds) {
  const double d = std::exp(-seconds / 60);
  return before * d + threads * (1 - d);
}

TEST(ValidityWarnings, LoadAfterTheRunsCountsOnlyTheOtherThreadsDuringThem) {
  // A quiet machine after 90 s of the run's own two threads reads 1.55: nothing beside them.
  const double quiet = average_after(0.1, 2, 90);
  EXPECT_NEAR(*others_during({2, 0.1, quiet, 2, 90, {}}), 0.0, 1e-9);
  EXPECT_THAT(validity_warnings({2, 0.1, quiet, 2, 90, {}}, 0.01, 0.05), IsEmpty());
  // 56 s beside two other busy threads, from a quiet start (validate of gpt-small, 2026-12-01):
  // 0.92 before, 2.79 after.
  const double busy = average_after(0.92, 4, 56);
  EXPECT_NEAR(*others_during({2, 0.92, busy, 2, 56, {}}), 2.0, 1e-9);
  const auto w = validity_warnings({2, 0.92, busy, 2, 56, {}}, 0.01, 0.05);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_THAT(w[0], HasSubstr("after the runs on 2 cores: 2.00 threads on average beside their own 2 (above 1.5)"));
  // A run of a few seconds: what the average holds beyond the run's small share.
  EXPECT_NEAR(*others_during({2, 0.5, 1.7, 2, 3, {}}), 1.7 - 2 * (1 - std::exp(-0.05)), 1e-9);
  EXPECT_THAT(validity_warnings({2, std::nullopt, std::nullopt, 2, 60, {}}, 0.01, 0.05), IsEmpty());  // no /proc/loadavg
  EXPECT_EQ(others_during({2, 0.5, std::nullopt, 2, 60, {}}), std::nullopt);
}

TEST(ValidityWarnings, ASpreadAboveTheTolerance) {
  EXPECT_THAT(validity_warnings({8, 0.5, 0.5, 2, 1, {}}, 0.05, 0.05), IsEmpty());
  EXPECT_THAT(validity_warnings({8, 0.5, 0.5, 2, 1, {}}, 0.06, 0.05),
              ElementsAre("the profile's repeats spread 6.00 % (p10 to p90 of the block's passes), more than the "
                          "tolerance 5.00 %: an error within the tolerance cannot be told from noise"));
  EXPECT_EQ(validity_warnings({2, 1.9, 0.5, 2, 1, {}}, 0.2, 0.05).size(), 2u);  // one line each
}

TEST(ValidityWarnings, StolenCpuTimeAboveTwoPercent) {
  EXPECT_EQ(steal_share(CpuTimes{1000, 10}, CpuTimes{2000, 140}), 0.13);
  EXPECT_EQ(steal_share(CpuTimes{1000, 10}, std::nullopt), std::nullopt);
  EXPECT_EQ(steal_share(CpuTimes{1000, 10}, CpuTimes{1000, 10}), std::nullopt);  // no time passed
  EXPECT_THAT(validity_warnings({2, 0.1, 0.1, 2, 1, 0.02}, 0.01, 0.05), IsEmpty());
  EXPECT_THAT(validity_warnings({2, 0.1, 0.1, 2, 1, 0.13}, 0.01, 0.05),
              ElementsAre("the hypervisor took 13.00 % of the CPU time while this ran (steal, /proc/stat): the virtual "
                          "machine's host ran others on these cores, and op times vary with what it does"));
  EXPECT_THAT(conditions_line({2, 0.42, 0.5, 2, 1, 0.013}, 0.021), HasSubstr("2 cores), 1.30 % of CPU time stolen; profile"));
  const std::optional<CpuTimes> now = cpu_times();  // Linux: /proc/stat's first line
  ASSERT_TRUE(now.has_value());
  EXPECT_GT(now->total, 0u);
  EXPECT_LE(now->steal, now->total);
}

TEST(Verdict, PassesWithinTheToleranceOnBothSides) {
  EXPECT_TRUE(passes(0.05, 0.05));
  EXPECT_TRUE(passes(-0.05, 0.05));
  EXPECT_FALSE(passes(0.0501, 0.05));
  EXPECT_FALSE(passes(-0.0501, 0.05));
}

TEST(ConditionsLine, SaysWhatIsUnknown) {
  EXPECT_EQ(conditions_line({2, 0.42, std::nullopt, 2, 1, {}}, 0.021),
            "machine load 0.42 before, unknown after (1-minute average, 2 cores); profile repeats spread 2.10 % "
            "((p90 - p10) / median, median over the block's passes)");
}

// The machine's drift during a run: the largest change of a core's factor between the probes
// before and after it, over the cores both have; a warning past the tolerance.
TEST(CoreSpeedDrift, LargestChangeOfACoreBeyondTheTolerance) {
  const CoreSpeeds before{{0, 1}, {1.0, 1.25}, {}};
  const CoreSpeeds after{{1, 0}, {1.0, 1.02}, {}};  // core 1 got 20 % faster, core 0 2 % slower
  EXPECT_DOUBLE_EQ(speed_drift(before, after), 0.2);
  EXPECT_EQ(speed_drift(before, CoreSpeeds{}), 0);
  EXPECT_EQ(speed_drift(CoreSpeeds{}, after), 0);
  EXPECT_EQ(drift_warning("1f1b", before, before, 0.05), "");
  EXPECT_EQ(drift_warning("1f1b", before, after, 0.05),
            "the machine's speed moved 20.00 % during 1f1b's run (a block pass on each core before and after it), "
            "more than the tolerance 5.00 %: its error cannot be told from the machine's drift");
  EXPECT_EQ(drift_warning("1f1b", before, after, 0.25), "");
  EXPECT_EQ(speeds_json(after).dump(),
            R"([{"core":1,"slowdown":1.0,"visits":[]},{"core":0,"slowdown":1.02,"visits":[]}])");
}

// The plain prediction takes each core halfway between its probes, matched by core id; a
// core the second probe missed keeps the first's factor, and no second probe changes nothing.
TEST(CoreSpeedDrift, ThePredictionTakesEachCoreHalfwayBetweenItsProbes) {
  const CoreSpeeds before{{0, 1}, {1.0, 1.25}, {}};
  const CoreSpeeds after{{1, 0}, {1.0, 1.02}, {}};
  EXPECT_EQ(speeds_during_run(before, after), (std::vector<double>{1.01, 1.125}));
  EXPECT_EQ(speeds_during_run(before, CoreSpeeds{}), before.slowdown);
  EXPECT_EQ(speeds_during_run(before, CoreSpeeds{{1}, {1.75}, {}}), (std::vector<double>{1.0, 1.5}));
  EXPECT_TRUE(speeds_during_run(CoreSpeeds{}, after).empty());
}

// The machine in each draw of the interval (machine_draws): without visits, every core at one
// uniform point u between its probes before and after; with visits, each core's speed as well
// as its visits know it (a bootstrap median), so visits that agree change nothing.
TEST(MachineDraws, BetweenTheProbesAndAsWellAsTheVisitsKnowEachCore) {
  const CoreSpeeds before{{0, 1}, {1.0, 1.0}, {}};
  const CoreSpeeds after{{0, 1}, {1.5, 1.5}, {}};
  EXPECT_TRUE(machine_draws(2, CoreSpeeds{}, after, 10, 1).empty());  // no speeds: no machine term
  const auto moved = machine_draws(2, before, after, 2001, 7);
  ASSERT_EQ(moved.size(), 2001u);
  std::vector<double> first;
  for (const std::vector<double>& row : moved) {
    ASSERT_EQ(row.size(), 2u);
    EXPECT_EQ(row[0], row[1]);  // one u for the whole machine
    EXPECT_GE(row[0], 1.0);
    EXPECT_LT(row[0], 1.5);
    first.push_back(row[0]);
  }
  std::sort(first.begin(), first.end());
  EXPECT_NEAR(first[1000], 1.25, 0.02);  // uniform
  EXPECT_EQ(machine_draws(2, before, after, 2001, 7), moved);  // the same for a seed
  EXPECT_NE(machine_draws(2, before, after, 2001, 8), moved);

  // Not probed after: the probe before in every draw; visits that agree: the same.
  const CoreSpeeds steady{{0, 1}, {1.1, 0.9}, {{1.1, 1.1, 1.1, 1.1, 1.1}, {0.9, 0.9, 0.9, 0.9, 0.9}}};
  for (const std::vector<double>& row : machine_draws(2, steady, CoreSpeeds{}, 50, 3))
    EXPECT_EQ(row, (std::vector<double>{1.1, 0.9}));
  // More devices than cores: each device at the cores' mean (executor/shared_layout.hpp).
  for (const std::vector<double>& row : machine_draws(4, steady, CoreSpeeds{}, 5, 3))
    EXPECT_EQ(row, (std::vector<double>(4, 1.0)));

  // Visits that spread: each core drawn within its visits' range, its own draw, centred
  // on their median; the cores' draws independent of each other.
  const CoreSpeeds spread{{0, 1}, {1.0, 1.0}, {{0.9, 0.95, 1.0, 1.05, 1.1}, {0.9, 0.95, 1.0, 1.05, 1.1}}};
  std::vector<double> core0;
  int differ = 0;
  for (const std::vector<double>& row : machine_draws(2, spread, CoreSpeeds{}, 2001, 5)) {
    EXPECT_GE(row[0], 0.9);
    EXPECT_LE(row[0], 1.1);
    core0.push_back(row[0]);
    differ += row[0] != row[1];
  }
  std::sort(core0.begin(), core0.end());
  EXPECT_NEAR(core0[1000], 1.0, 1e-12);
  EXPECT_LT(core0[100], 0.97);  // the median of 5 resampled visits: p5 below 0.97, p95 above 1.03
  EXPECT_GT(core0[1900], 1.03);
  EXPECT_GT(differ, 1000);
}

}  // namespace
}  // namespace pipesim
