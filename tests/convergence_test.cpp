// `pipesim converge`'s choices on made-up curves (tools/convergence.hpp): the learning rate
// tuned per schedule (tuned_runs: most seeds reaching the target, then fewest iterations, then
// the lower final loss, then the lower rate) and the target chosen over several rates
// (common_target).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tools/convergence.hpp"

namespace pipesim {
namespace {

// A seed's validation curve: (iteration, loss) points.
SeedCurve curve(std::uint64_t seed, const std::vector<std::pair<std::int32_t, double>>& points) {
  SeedCurve c;
  c.seed = seed;
  for (const auto& [it, loss] : points) c.validation.push_back({it, loss});
  return c;
}

ScheduleConvergence at(const std::string& schedule, double lr, std::vector<SeedCurve> seeds) {
  ScheduleConvergence r;
  r.schedule = schedule;
  r.lr = lr;
  r.seeds = std::move(seeds);
  return r;
}

// Reaches loss 2.0 first at `iteration` (and ends at `final_loss`).
SeedCurve reaching(std::uint64_t seed, std::int32_t iteration, double final_loss = 1.9) {
  return curve(seed, {{0, 5.0}, {iteration - 10, 2.5}, {iteration, 2.0}, {1000, final_loss}});
}
SeedCurve never(std::uint64_t seed) { return curve(seed, {{0, 5.0}, {1000, 2.5}}); }

TEST(TunedRuns, MostSeedsReachingFirstThenFewestMedianIterations) {
  const std::vector<ScheduleConvergence> runs = {
      // "a": 3e-3 is the fastest seed but reaches on one seed of two; 1e-3 beats 1e-2 on the median.
      at("a", 1e-3, {reaching(1, 40), reaching(2, 50)}),
      at("a", 3e-3, {reaching(1, 30), never(2)}),
      at("a", 1e-2, {reaching(1, 50), reaching(2, 60)}),
      // "b": both rates reach on every seed; medians (the lower middle) 60 against 40.
      at("b", 1e-3, {reaching(1, 60), reaching(2, 60)}),
      at("b", 3e-3, {reaching(1, 40), reaching(2, 70)}),
  };
  EXPECT_EQ(tuned_runs(runs, 2.0), (std::vector<std::size_t>{0, 4}));
}

TEST(TunedRuns, TiesGoToTheLowerFinalLossThenTheLowerRate) {
  const std::vector<ScheduleConvergence> runs = {
      at("a", 1e-3, {reaching(1, 40, 1.9), reaching(2, 40, 1.9)}),
      at("a", 3e-3, {reaching(1, 40, 1.8), reaching(2, 40, 1.8)}),
      at("b", 3e-3, {reaching(1, 40), reaching(2, 40)}),
      at("b", 1e-3, {reaching(1, 40), reaching(2, 40)}),  // identical curves: the lower rate, wherever listed
  };
  EXPECT_EQ(tuned_runs(runs, 2.0), (std::vector<std::size_t>{1, 3}));
}

TEST(TunedRuns, NoRateReachingTakesTheLowestFinalLossAndANanLossNeverWins) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<ScheduleConvergence> runs = {
      at("a", 1e-3, {curve(1, {{0, 5.0}, {100, 3.0}})}),
      at("a", 1e-2, {curve(1, {{0, 5.0}, {100, nan}})}),  // diverged
      at("a", 3e-3, {curve(1, {{0, 5.0}, {100, 2.8}})}),
  };
  EXPECT_EQ(tuned_runs(runs, 1.0), (std::vector<std::size_t>{2}));
}

TEST(CommonTarget, EveryScheduleReachesItOnEverySeedAtOneRateAtLeast) {
  const std::vector<ScheduleConvergence> runs = {
      // "a": at 1e-3 the seeds' lowest are 2.0 and 2.2, at 3e-3 2.5 and 1.5: "a" reaches 2.2 at 1e-3.
      at("a", 1e-3, {curve(1, {{0, 5.0}, {10, 2.0}}), curve(2, {{0, 5.0}, {10, 2.2}})}),
      at("a", 3e-3, {curve(1, {{0, 5.0}, {10, 2.5}}), curve(2, {{0, 5.0}, {10, 1.5}})}),
      // "b": 2.4 at 1e-3; a diverged rate (no finite loss) is never its best.
      at("b", 1e-3, {curve(1, {{0, 5.0}, {10, 2.3}}), curve(2, {{0, 5.0}, {10, 2.4}})}),
      at("b", 3e-3, {curve(1, {{0, std::numeric_limits<double>::quiet_NaN()}}), curve(2, {{0, 5.0}, {10, 1.0}})}),
  };
  EXPECT_DOUBLE_EQ(common_target(runs), 2.4);
  // So each schedule's tuned run reaches it on every seed.
  for (const std::size_t i : tuned_runs(runs, common_target(runs)))
    for (const SeedCurve& c : runs[i].seeds) EXPECT_TRUE(iterations_to(c, 2.4)) << runs[i].schedule;
  // With one rate per schedule it is the highest of every run's lowest, as before tuning.
  EXPECT_DOUBLE_EQ(common_target({runs[0], runs[2]}), 2.4);
  EXPECT_DOUBLE_EQ(common_target({runs[1], runs[2]}), 2.5);
}

}  // namespace
}  // namespace pipesim
