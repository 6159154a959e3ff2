// The profiled cost model's contention (cost_models/profiled.hpp): the interference curve
// and the shared-core turns it gives the engine's pools, and how a prediction applies them
// (executor/shared_layout.hpp's profile_slowdowns, simulate --cost --share-cores).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "synthetic_profile.hpp"
#include "cli_runner.hpp"
#include "cost_models/catalog.hpp"
#include "cost_models/profiled.hpp"
#include "executor/shared_layout.hpp"

namespace pipesim {
namespace {

using ::testing::HasSubstr;

TEST(ProfiledCost, SlowdownCurvesForTheEnginesPools) {
  ProfiledCostConfig c = synthetic_config(find_model("gpt-tiny"));
  {
    const ProfiledCostModel none(c);  // no curve in the profile: no interference
    for (int k = 0; k < kNumOpKinds; ++k) EXPECT_TRUE(none.slowdown(static_cast<OpKind>(k)).empty()) << k;
    EXPECT_EQ(none.cores(), 2);
  }
  ProfileInterference& in = c.profile.interference;
  in.micro_batch_size = 2;
  in.block = {two_points(200e-6, 250e-6), two_points(100e-6, 150e-6), two_points(50e-6, 50e-6)};
  in.embedding = {two_points(1e-6, 3e-6), {}, two_points(1e-6, 1e-6)};
  in.head = {two_points(6e-5, 9e-5), two_points(4e-5, 4e-5), two_points(4e-5, 4e-5)};
  const ProfiledCostModel m(c);
  EXPECT_THAT(m.slowdown(OpKind::F), ::testing::ElementsAre(1, ::testing::DoubleEq(1.25)));
  EXPECT_THAT(m.slowdown(OpKind::I), ::testing::ElementsAre(1, ::testing::DoubleEq(1.5)));
  EXPECT_THAT(m.slowdown(OpKind::W), ::testing::ElementsAre(1, 1));
  ASSERT_EQ(m.slowdown(OpKind::B).size(), 2u);
  EXPECT_EQ(m.slowdown(OpKind::B)[0], 1);
  EXPECT_DOUBLE_EQ(m.slowdown(OpKind::B)[1], (150.0 + 50) / (100 + 50));  // the curve of I + W
  EXPECT_TRUE(m.slowdown(OpKind::OptStep).empty());
  EXPECT_TRUE(m.slowdown(OpKind::SendF).empty());
  EXPECT_EQ(&m.slowdowns()[static_cast<std::size_t>(OpKind::I)], &m.slowdown(OpKind::I));
  // The durations themselves are the times alone: the engine applies the curve.
  ProfiledCostConfig alone = synthetic_config(find_model("gpt-tiny"));
  alone.micro_batch_size = c.micro_batch_size;
  EXPECT_EQ(m.compute_time(make_op(OpKind::F, 0, 0), OpScale{}),
            ProfiledCostModel(alone).compute_time(make_op(OpKind::F, 0, 0), OpScale{}));
}

TEST(ProfiledCost, TurnSlowdownsForTheEnginesPools) {
  ProfiledCostConfig c = synthetic_config(find_model("gpt-tiny"));
  {
    const ProfiledCostModel none(c);  // no turns in the profile
    for (double f : none.turn_slowdowns()) EXPECT_EQ(f, 1);
  }
  ProfileSharedCore& t = c.profile.shared_core;
  t.micro_batch_size = 2;
  t.forward = two_points(200e-6, 220e-6);
  t.input_grad = two_points(100e-6, 130e-6);
  t.weight_grad = two_points(50e-6, 50e-6);
  t.optimizer = two_points(80e-6, 120e-6);
  const ProfiledCostModel m(c);
  const auto turn = [&](OpKind k) { return m.turn_slowdowns()[static_cast<std::size_t>(k)]; };
  EXPECT_DOUBLE_EQ(turn(OpKind::F), 1.1);
  EXPECT_DOUBLE_EQ(turn(OpKind::I), 1.3);
  EXPECT_DOUBLE_EQ(turn(OpKind::W), 1);
  EXPECT_DOUBLE_EQ(turn(OpKind::B), (130.0 + 50) / (100 + 50));  // I + W
  EXPECT_DOUBLE_EQ(turn(OpKind::OptStep), 1.5);
  EXPECT_EQ(turn(OpKind::GradSync), 1);
  EXPECT_EQ(turn(OpKind::SendF), 1);
}

// A turn's factor is the ratio of the times' means; whether it stands out of the noise, the
// larger of the medians' and the means' ratios above 1, each in its standard errors.
TEST(ProfiledCost, TurnEvidenceIsTheMediansOrTheMeansInStandardErrors) {
  ProfiledCostConfig c = synthetic_config(find_model("gpt-tiny"));
  ProfileSharedCore& t = c.profile.shared_core;
  t.micro_batch_size = 2;
  // F: one long turn moves the mean (x1.3) more than the median (x1.2).
  const TimingStats alone = summarize_timings({9e-6, 10e-6, 11e-6}), turns = summarize_timings({11e-6, 12e-6, 16e-6});
  t.forward = {{1, 1.2}, {alone, turns}};
  // W: the medians x1.1 apart, the means equal (one long time alone).
  const TimingStats skewed = summarize_timings({9e-6, 10e-6, 14e-6}), flat = summarize_timings({11e-6, 11e-6, 11e-6});
  t.weight_grad = {{1, 1.1}, {skewed, flat}};
  t.input_grad = t.optimizer = two_points(1e-6, 1e-6);
  const ProfiledCostModel m(c);
  const auto at = [&](const auto& factors, OpKind k) { return factors[static_cast<std::size_t>(k)]; };
  EXPECT_DOUBLE_EQ(at(m.turn_slowdowns(), OpKind::F), 13.0 / 10);  // means, not the medians' 1.2
  // p10 to p90: 1.6 us of 10 and 4 us of 12, 3 repeats each; standard deviations 1 and sqrt(7).
  EXPECT_NEAR(relative_median_error(alone), 1.2533 * 1.6 / 2.5631 / 10 / std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(relative_median_error(turns), 1.2533 * 4 / 2.5631 / 12 / std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(relative_mean_error(alone), 1 / 10.0 / std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(relative_mean_error(turns), std::sqrt(7.0) / 13 / std::sqrt(3.0), 1e-12);
  const double medians = 0.2 / std::hypot(relative_median_error(alone), relative_median_error(turns));
  const double means = 0.3 / std::hypot(relative_mean_error(alone), relative_mean_error(turns));
  EXPECT_GT(means, medians);
  EXPECT_DOUBLE_EQ(at(m.turn_evidence(), OpKind::F), means);
  EXPECT_DOUBLE_EQ(at(m.turn_slowdowns(), OpKind::W), 1);
  EXPECT_NEAR(at(m.turn_evidence(), OpKind::W), 0.1 / relative_median_error(skewed), 1e-12);  // the medians'
  EXPECT_EQ(at(m.turn_evidence(), OpKind::I), 0);  // no slowdown, no spread
}

// A ring of device threads on 2 cores ran its turns beside another busy core: the curve's
// part (curve[1]), which a pool applies on its own, comes off the turns; a pinned pair's
// (versions 3 and 4) had no neighbour and keeps its factor.
TEST(ProfiledCost, ARingsTurnsLeaveTheCurvesPartToThePool) {
  ProfiledCostConfig c = synthetic_config(find_model("gpt-tiny"));
  ProfileInterference& in = c.profile.interference;
  in.micro_batch_size = 2;
  in.block = {two_points(200e-6, 220e-6), two_points(100e-6, 150e-6), two_points(50e-6, 50e-6)};
  in.embedding = {two_points(1e-6, 1e-6), {}, two_points(1e-6, 1e-6)};
  in.head = {two_points(6e-5, 6e-5), two_points(4e-5, 4e-5), two_points(4e-5, 4e-5)};
  ProfileSharedCore& t = c.profile.shared_core;
  t.micro_batch_size = 2;
  t.threads = 4;
  t.cores = 2;
  t.forward = two_points(200e-6, 264e-6);    // x1.32, the curve's x1.1 in it
  t.input_grad = two_points(100e-6, 105e-6);  // x1.05, less than the curve's x1.5
  t.weight_grad = two_points(50e-6, 65e-6);   // x1.3, no curve
  t.optimizer = two_points(80e-6, 96e-6);     // x1.2, no curve for the step
  const auto turns = [&] { return profile_slowdowns(ProfiledCostModel(c)).turns; };
  const auto at_kind = [](const KindFactors& f, OpKind k) { return f[static_cast<std::size_t>(k)]; };
  const KindFactors ring = turns();
  EXPECT_DOUBLE_EQ(at_kind(ring, OpKind::F), 1.32 / 1.1);
  EXPECT_EQ(at_kind(ring, OpKind::I), 1);
  EXPECT_DOUBLE_EQ(at_kind(ring, OpKind::W), 1.3);
  EXPECT_DOUBLE_EQ(at_kind(ring, OpKind::OptStep), 1.2);
  t.threads = 2;  // a pinned pair (versions 3 and 4): no neighbour busy in its turns
  t.cores = 1;
  EXPECT_DOUBLE_EQ(at_kind(turns(), OpKind::F), 1.32);
}

// simulate --cost with --share-cores: the profile's interference curve and shared-core turns
// on the pool (as validate predicts), unless --interference gives a curve of its own.
TEST(ProfiledCost, SharedCoresTakeTheProfilesInterferenceAndTurns) {
  Profile p = synthetic_profile(find_model("gpt-tiny"), {1, 2, 4}, exact_timing);
  ProfileInterference& in = p.interference;
  in.micro_batch_size = 2;
  in.block = {two_points(200e-6, 300e-6), two_points(100e-6, 150e-6), two_points(50e-6, 75e-6)};
  in.embedding = {two_points(1e-6, 1e-6), {}, two_points(1e-6, 1e-6)};
  in.head = {two_points(6e-5, 6e-5), two_points(4e-5, 4e-5), two_points(4e-5, 4e-5)};
  ProfileSharedCore& t = p.shared_core;
  t.micro_batch_size = 2;
  t.threads = 2;  // a ring of 2 device threads on 1 core: no neighbour's interference in its turns
  t.cores = 1;
  t.forward = two_points(200e-6, 400e-6);
  t.input_grad = two_points(100e-6, 200e-6);
  t.weight_grad = two_points(50e-6, 100e-6);
  t.optimizer = two_points(80e-6, 160e-6);
  const std::string path = testing_cli::temp_path("interference.profile.json");
  std::ofstream(path, std::ios::binary) << profile_json_text(p);
  const auto makespan = [&](const std::string& flags) {
    const testing_cli::Result r =
        testing_cli::run("simulate --schedule 1f1b -p 2 -m 4 --model gpt-tiny --micro-batch-size 2 --json --cost " + path +
                         " " + flags);
    EXPECT_EQ(r.code, 0) << r.out;
    return nlohmann::json::parse(r.out)["makespan_s"].get<double>();
  };
  const double alone = makespan("");
  // A core each: the curve with the other device busy (x1.5), no turns.
  EXPECT_GT(makespan("--share-cores 2 --core-sharing queue"), 1.2 * alone);
  EXPECT_DOUBLE_EQ(makespan("--share-cores 2 --core-sharing queue --interference 1"), alone);
  // One core for both: their turns (x2), against the same queue without.
  EXPECT_GT(makespan("--share-cores 1 --core-sharing queue"),
            1.5 * makespan("--share-cores 1 --core-sharing queue --interference 1"));
  const testing_cli::Result text =
      testing_cli::run("simulate --schedule 1f1b -p 2 -m 4 --model gpt-tiny --micro-batch-size 2 --share-cores 1 --cost " + path);
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_THAT(text.out, HasSubstr("shared        the devices share 1 cores (time-sliced); the profile's interference "
                                  "curve and shared-core turns, where beyond its noise\n"));
}

}  // namespace
}  // namespace pipesim
