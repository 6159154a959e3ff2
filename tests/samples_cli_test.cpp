// `simulate --samples N --seed S` and `compare --samples` (tools/sample_flags.hpp) against the
// real binary on the committed gpt-small CPU profile: byte-identical output for a seed,
// different intervals for another, the table, --json and the report's section, and the
// refusals (no distributions, N out of range, --seed alone).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"

namespace pipesim {
namespace {

using nlohmann::json;
using testing::HasSubstr;
using testing_cli::expect_one_line_error;
using testing_cli::Result;
using testing_cli::run;

const std::string kProfile = std::string(PIPESIM_TEST_DATA) + "/../../docs/validation/gpt-small-cpu-profile.json";
const std::string kSimulate = "simulate --cost " + kProfile + " -p 4 -m 8 ";

TEST(SamplesCli, TheSameSeedGivesTheSameBytesAndAnotherSeedOtherIntervals) {
  const Result a = run(kSimulate + "--samples 64 --seed 5 --json");
  ASSERT_EQ(a.code, 0) << a.out;
  EXPECT_EQ(run(kSimulate + "--samples 64 --seed 5 --json").out, a.out);
  const Result b = run(kSimulate + "--samples 64 --seed 6 --json");
  ASSERT_EQ(b.code, 0) << b.out;
  const json ja = json::parse(a.out)["prediction_interval"];
  const json jb = json::parse(b.out)["prediction_interval"];
  EXPECT_EQ(ja["samples"], 64);
  EXPECT_EQ(ja["seed"], 5);
  EXPECT_NE(ja["time_per_iteration_s"]["p50"], jb["time_per_iteration_s"]["p50"]);
  const json& t = ja["time_per_iteration_s"];
  EXPECT_LT(t["p5"].get<double>(), t["p95"].get<double>());
  for (const char* lo_hi : {"p5", "p10", "p50", "p90"}) EXPECT_GT(t[lo_hi].get<double>(), 0) << lo_hi;
  EXPECT_LE(t["p10"].get<double>(), t["p50"].get<double>());
  EXPECT_LE(t["p50"].get<double>(), t["p90"].get<double>());
  // The plain prediction is there as before, and lies within the draws' range.
  const double plain = json::parse(a.out)["time_per_iteration_s"].get<double>();
  EXPECT_GT(plain, 0.9 * t["p5"].get<double>());
  EXPECT_LT(plain, 1.1 * t["p95"].get<double>());
}

TEST(SamplesCli, TablesAndReport) {
  const std::string report = testing_cli::temp_path("samples.html");
  const Result r = run(kSimulate + "--samples 20 --report " + report);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("prediction intervals: 20 simulations on draws of the profile's measured distributions, "
                               "seed 0"));
  EXPECT_THAT(r.out, HasSubstr("time/iter p10"));
  // Why p50 sits above the plain prediction is said under the table and in the report.
  EXPECT_THAT(r.out, HasSubstr("\nThe plain prediction takes every op at its mean;"));
  const std::string html = testing_cli::slurp(report);
  EXPECT_THAT(html, HasSubstr("<h2>Prediction intervals</h2>"));
  EXPECT_THAT(html, HasSubstr("so the draws' p50 lies above it"));
  EXPECT_THAT(html, HasSubstr("20 simulations"));
  const Result c = run("compare --cost " + kProfile + " -p 2 -m 4 --schedules 1f1b,chimera --samples 20 --json");
  ASSERT_EQ(c.code, 0) << c.out;
  const json j = json::parse(c.out);
  ASSERT_EQ(j["schedules"].size(), 2u);
  for (const json& s : j["schedules"]) EXPECT_EQ(s["prediction_interval"]["samples"], 20) << s["schedule"];
  const Result table = run("compare --cost " + kProfile + " -p 2 -m 4 --schedules 1f1b,chimera --samples 20");
  ASSERT_EQ(table.code, 0) << table.out;
  EXPECT_THAT(table.out, HasSubstr("\nchimera "));
  EXPECT_THAT(table.out, HasSubstr("bubble p10"));
  // Without --samples nothing changes.
  EXPECT_FALSE(json::parse(run(kSimulate + "--json").out).contains("prediction_interval"));
}

TEST(SamplesCli, SavedSettingsKeepTheSamplesAndTheSeed) {
  const std::string config = testing_cli::temp_path("samples.config.json");
  const Result saved = run(kSimulate + "--samples 16 --seed 9 --json --save-config " + config);
  ASSERT_EQ(saved.code, 0) << saved.out;
  const Result again = run("simulate --json --config " + config);
  ASSERT_EQ(again.code, 0) << again.out;
  EXPECT_EQ(json::parse(again.out)["prediction_interval"], json::parse(saved.out)["prediction_interval"]);
  // Saved without --samples, the settings hold no --seed either (it needs --samples).
  ASSERT_EQ(run(kSimulate + "--save-config " + config).code, 0);
  EXPECT_FALSE(json::parse(testing_cli::slurp(config)).contains("seed"));
  EXPECT_EQ(run("simulate --config " + config).code, 0);
}

TEST(SamplesCli, BadInput) {
  expect_one_line_error(run(kSimulate + "--samples 0"), "--samples: expected a number of simulations in 1..100000, got 0");
  expect_one_line_error(run(kSimulate + "--samples 100001"),
                        "--samples: expected a number of simulations in 1..100000, got 100001");
  expect_one_line_error(run("simulate --samples 10"),
                        "--samples: needs measured distributions, a profile from `pipesim profile` (--cost FILE); "
                        "the uniform cost model has none");
  expect_one_line_error(run("compare --model gpt3-1.3b --hardware h100-sxm --samples 10"),
                        "the analytical cost model has none");
  expect_one_line_error(run(kSimulate + "--seed 4"), "--seed requires --samples");
}

}  // namespace
}  // namespace pipesim
