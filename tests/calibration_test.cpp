// Calibrated prediction intervals (assess/calibration.hpp): the conformity score and the
// conformal quantile against their closed forms, the coverage it promises on exchangeable
// data, and validate --calibration's reading of past validate --json outputs
// (tools/validate_calibration.hpp): groups, folders, and every kind of bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "assess/calibration.hpp"
#include "core/error.hpp"
#include "tests/cli_runner.hpp"
#include "tools/validate_calibration.hpp"

namespace pipesim {
namespace {

using nlohmann::json;
using testing::HasSubstr;

TEST(ConformityScore, HowFarOutsideRelativeToTheMedian) {
  EXPECT_DOUBLE_EQ(conformity_score({9, 10, 11, 12}), 0.1);    // 1 above p95, of p50 = 10
  EXPECT_DOUBLE_EQ(conformity_score({9, 10, 11, 7}), 0.2);     // 2 below p5
  EXPECT_DOUBLE_EQ(conformity_score({9, 10, 11, 10}), -0.1);   // inside, 1 from either end
  EXPECT_DOUBLE_EQ(conformity_score({9, 10, 11, 9.5}), -0.05);  // nearer p5
}

TEST(ConformalWidening, TheOrderStatisticOfTheFiniteSampleRule) {
  EXPECT_EQ(min_calibration_runs(), 9);
  EXPECT_EQ(min_calibration_runs(0.05), 19);
  EXPECT_EQ(min_calibration_runs(0.5), 1);
  std::vector<double> scores{0.08, 0.01, 0.05, 0.02, 0.07, 0.03, 0.06, 0.04};
  EXPECT_FALSE(conformal_widening(scores));  // 8 < 9: ceil(0.9 x 9) = 9 > 8
  scores.push_back(0.09);
  EXPECT_DOUBLE_EQ(*conformal_widening(scores), 0.09);  // n = 9: ceil(0.9 x 10) = 9th, the largest
  for (int i = 10; i < 19; ++i) scores.push_back(i / 100.0);
  ASSERT_EQ(scores.size(), 18u);
  EXPECT_DOUBLE_EQ(*conformal_widening(scores), 0.18);  // n = 18: ceil(17.1) = 18th
  scores.push_back(0.19);
  EXPECT_DOUBLE_EQ(*conformal_widening(scores), 0.18);  // n = 19: ceil(18) = 18th
}

TEST(CalibratedRange, WidensByQTimesTheMedianAndNarrowsNoFurtherThanTheMidpoint) {
  const Percentiles t{100, 101, 110, 119, 120};
  const CalibratedRange wide = calibrated_range(t, 0.1);
  EXPECT_DOUBLE_EQ(wide.p5, 89);
  EXPECT_DOUBLE_EQ(wide.p95, 131);
  EXPECT_TRUE(wide.contains(89));
  EXPECT_FALSE(wide.contains(131.5));
  const CalibratedRange narrow = calibrated_range(t, -0.05);
  EXPECT_DOUBLE_EQ(narrow.p5, 105.5);
  EXPECT_DOUBLE_EQ(narrow.p95, 114.5);
  const CalibratedRange point = calibrated_range(t, -5);  // past intervals far too wide: the midpoint
  EXPECT_DOUBLE_EQ(point.p5, 110);
  EXPECT_DOUBLE_EQ(point.p95, 110);
  EXPECT_DOUBLE_EQ(calibrated_range(t, 20).p5, 0);  // never below 0 s
}

// The promise: on exchangeable runs, the calibrated [p5, p95] holds the measurement in at
// least 90 % of new runs, however much wider the real noise is than the sampled interval.
// Here the interval says +-2 % and the runs move by +-6 % (uniform) around a 3 % bias.
TEST(ConformalWidening, CoversNinetyPercentOfNewRunsWhereTheSampledIntervalDoesNot) {
  std::mt19937_64 rng(7);
  const auto draw = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };  // [0, 1)
  const auto run = [&] {
    const double p50 = 1 + draw();
    return PastPrediction{0.98 * p50, p50, 1.02 * p50, p50 * (0.97 + 0.12 * (draw() - 0.5))};
  };
  std::vector<double> scores;
  for (int i = 0; i < 99; ++i) scores.push_back(conformity_score(run()));
  const double q = *conformal_widening(scores);
  // Misses below p5 reach 0.98 - 0.91 = 0.07 of p50; 10 % of runs miss by more than 0.058.
  EXPECT_NEAR(q, 0.058, 0.008);
  int sampled = 0, calibrated = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const PastPrediction r = run();
    sampled += r.measured >= r.p5 && r.measured <= r.p95;
    calibrated += calibrated_range({r.p5, 0, r.p50, 0, r.p95}, q).contains(r.measured);
  }
  EXPECT_LT(sampled, n / 2);
  EXPECT_GE(calibrated, static_cast<int>(0.88 * n));  // 0.9 in expectation over the calibration draw (here 94.5 %)
  EXPECT_LE(calibrated, static_cast<int>(0.97 * n));
}

// One validate --json schedule object with just what calibration reads.
json past_run(double p5, double p50, double p95, double measured, bool shared = false,
              const std::string& model = "gpt-tiny") {
  return {{"schedule", "1f1b"},
          {"backend", "cpu"},
          {"model", model},
          {"time_per_iteration_error", p50 / measured - 1},
          {"prediction_interval", {{"time_per_iteration_s", {{"p5", p5}, {"p50", p50}, {"p95", p95}}}}},
          {"core_use", shared ? json{{"cores", 2}} : json(nullptr)},
          {"measured", {{"time_per_iteration_s", measured}}}};
}

TEST(CalibrationFiles, OneObjectOrSchedulesEachRunInItsGroup) {
  CalibrationRuns runs;
  EXPECT_TRUE(add_calibration_text(runs, past_run(0.9, 1, 1.1, 1.2).dump(), "a.json", true));
  const json several = {{"schedules", {past_run(0.9, 1, 1.1, 1.0, true), past_run(0.9, 1, 1.1, 0.85, true),
                                       past_run(1.8, 2, 2.2, 2.0, false, "gpt-small")}},
                        {"coverage", 0.5}};
  EXPECT_TRUE(add_calibration_text(runs, several.dump(), "b.json", true));
  EXPECT_EQ(runs.files, 2);
  EXPECT_EQ(runs.runs(), 4);
  ASSERT_EQ(runs.scores.size(), 3u);
  EXPECT_THAT(runs.scores.at("cpu gpt-tiny"), testing::ElementsAre(testing::DoubleNear(0.1, 1e-12)));
  EXPECT_THAT(runs.scores.at("cpu gpt-tiny, device threads sharing cores"),
              testing::ElementsAre(testing::DoubleNear(-0.1, 1e-12), testing::DoubleNear(0.05, 1e-12)));
  EXPECT_THAT(runs.scores.at("cpu gpt-small"), testing::ElementsAre(testing::DoubleNear(-0.1, 1e-12)));
  EXPECT_EQ(calibration_group("cuda", "gpt3-1.3b", false), "cuda gpt3-1.3b");
}

TEST(CalibrationFiles, ANewRunIsCalibratedOnItsGroupOnly) {
  CalibrationRuns runs;
  for (int i = 1; i <= 9; ++i) runs.scores["cpu gpt-tiny"].push_back(i / 100.0);
  for (int i = 1; i <= 5; ++i) runs.scores["cpu gpt-small"].push_back(1.0);
  const Percentiles t{95, 97, 100, 103, 105};
  const Calibrated c = calibrate(runs, "cpu gpt-tiny", t, 112);
  EXPECT_EQ(c.runs, 9);
  ASSERT_TRUE(c.widening);
  EXPECT_DOUBLE_EQ(*c.widening, 0.09);
  EXPECT_DOUBLE_EQ(c.range.p5, 86);
  EXPECT_DOUBLE_EQ(c.range.p95, 114);
  EXPECT_TRUE(c.inside);
  EXPECT_EQ(calibrated_range_text(c), "86 ns .. 114 ns");
  const json j = calibrated_json(c);
  EXPECT_EQ(j["calibration_runs"], 9);
  EXPECT_DOUBLE_EQ(j["time_per_iteration_s"]["p95"].get<double>(), 114e-9);
  const Calibrated few = calibrate(runs, "cpu gpt-small", t, 100);  // 5 runs of 9 needed
  EXPECT_FALSE(few.widening);
  EXPECT_EQ(calibrated_range_text(few), "- (5 of 9 runs)");
  EXPECT_TRUE(calibrated_json(few)["inside"].is_null());
  EXPECT_EQ(calibrate(runs, "cuda gpt-tiny", t, 100).runs, 0);
  EXPECT_THAT(calibration_text(runs), HasSubstr("  cpu gpt-small: 5 runs, too few for a calibrated [p5, p95] (9 needed)"));
  EXPECT_THAT(calibration_text(runs), HasSubstr("  cpu gpt-tiny: 9 runs, [p5, p95] widened by 9.00 % of p50 each way"));
}

void expect_input_error(const std::string& text, const std::string& needle) {
  CalibrationRuns runs;
  try {
    add_calibration_text(runs, text, "past.json", true);
    ADD_FAILURE() << "no error for " << text;
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(needle));
  }
}

TEST(CalibrationFiles, BadInputNamesTheFileAndTheJsonPath) {
  expect_input_error("{\"traceEvents\": []}", "past.json: expected validate --json output");
  expect_input_error("{\"schedules\": [{\"schedule\": \"1f1b\"}]}", "past.json: /schedules: expected validate --json output");
  expect_input_error("[1, 2", "past.json");
  json j = past_run(0.9, 1, 1.1, 1);
  j["prediction_interval"]["time_per_iteration_s"].erase("p50");
  expect_input_error(j.dump(), "past.json: /prediction_interval/time_per_iteration_s: missing field 'p50'");
  j = past_run(1.2, 1, 1.1, 1);
  expect_input_error(j.dump(), "past.json: /prediction_interval/time_per_iteration_s: expected p5 <= p50 <= p95");
  j = past_run(0.9, 1, 1.1, 1);
  j["measured"]["time_per_iteration_s"] = -1;
  expect_input_error(json{{"schedules", {past_run(0.9, 1, 1.1, 1), j}}}.dump(),
                     "past.json: /schedules/1/measured/time_per_iteration_s: expected a positive number of seconds; got -1");
  j = past_run(0.9, 1, 1.1, 1);
  j["core_use"] = 3;
  expect_input_error(j.dump(), "past.json: /core_use: expected an object or null; got 3");
  j.erase("core_use");
  expect_input_error(j.dump(), "past.json: /: missing field 'core_use'");
  j = past_run(0.9, 1, 1.1, 1);
  j["model"] = 7;
  expect_input_error(j.dump(), "past.json: /model: expected a non-empty string; got 7");
}

TEST(CalibrationFiles, AFolderIsSearchedAndWhatIsNotValidateJsonIsSkipped) {
  namespace fs = std::filesystem;
  const fs::path dir = testing_cli::temp_path("calibration_folder");
  fs::create_directories(dir / "round1");
  const auto write = [&](const fs::path& p, const std::string& text) { std::ofstream(dir / p) << text; };
  write("round1/tiny.json", json{{"schedules", {past_run(0.9, 1, 1.1, 1.2), past_run(0.9, 1, 1.1, 1)}}}.dump());
  write("round1/amdp.json", "");                                   // a failed run's empty output
  write("round1/1f1b.validate.trace.json", "{\"traceEvents\": []}");  // a trace
  write("round1/tiny.err", "not json at all");                     // not *.json: not read
  write("b.json", past_run(0.9, 1, 1.1, 0.8).dump());
  const CalibrationRuns runs = read_calibration({dir.string(), (dir / "b.json").string()});  // b.json once
  EXPECT_EQ(runs.files, 2);
  EXPECT_EQ(runs.skipped_files, 2);
  EXPECT_THAT(runs.scores.at("cpu gpt-tiny"), testing::ElementsAre(testing::DoubleNear(0.1, 1e-12),
                                                                   testing::DoubleNear(0.1, 1e-12),
                                                                   testing::DoubleNear(-0.1, 1e-12)));
  EXPECT_THAT(calibration_text(runs), testing::StartsWith("calibration: 3 past runs in 2 files (2 files skipped: "));
  // A named file must be validate's JSON; a path must exist.
  EXPECT_THROW(read_calibration({(dir / "round1/amdp.json").string()}), InputError);
  try {
    read_calibration({(dir / "none").string()});
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--calibration: "));
    EXPECT_THAT(e.what(), HasSubstr("no such file or folder"));
  }
  // A folder with more .json files than kMaxCalibrationFiles is refused, not walked to its end.
  const fs::path many = testing_cli::temp_path("calibration_many");
  fs::create_directories(many);
  for (int i = 0; i <= kMaxCalibrationFiles; ++i) std::ofstream(many / ("r" + std::to_string(i) + ".json"));
  try {
    read_calibration({many.string()});
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(": more than 10000 .json files below it (name the folders of past validations)"));
  }
  // A folder holding validate's JSON with a broken field is an error, not a skip.
  json broken = past_run(0.9, 1, 1.1, 1);
  broken["measured"] = "fast";
  write("round1/broken.json", broken.dump());
  EXPECT_THROW(read_calibration({dir.string()}), InputError);
}

}  // namespace
}  // namespace pipesim
