// validate's text (tools/validation_output.hpp): the coverage lines, with and without
// --calibration, and the note on a plain bubble below its interval.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tools/validation_output.hpp"

namespace pipesim {
namespace {

TEST(ValidationOutput, TheVerdictCountsBothCoverages) {
  Tally t;
  t.total = 8;
  t.inside = 3;
  EXPECT_EQ(verdict_text(t, 0.05, true),
            "measured inside the predicted [p5, p95]: 3 of 8 (37.50 %)\n"
            "verdict: PASS (time per iteration within 5.00 %: 8 of 8)\n");
  t.calibrated = 8;
  t.calibrated_inside = 7;
  EXPECT_THAT(verdict_text(t, 0.05, true),
              testing::StartsWith("measured inside the predicted [p5, p95]: 3 of 8 (37.50 %)\n"
                                  "measured inside the calibrated [p5, p95]: 7 of 8 (87.50 %)\nverdict: PASS"));
}

Validation with_bubble(const std::string& name, double plain, double p10, double p90) {
  Validation v;
  v.schedule.name = name;
  v.predicted.bubble_ratio = plain;
  v.interval.bubble_ratio.p10 = p10;
  v.interval.bubble_ratio.p90 = p90;
  return v;
}

TEST(ValidationOutput, APlainBubbleBelowItsIntervalIsExplained) {
  EXPECT_EQ(bubble_note({with_bubble("1f1b", 0.25, 0.24, 0.27)}), "");
  const std::string note =
      bubble_note({with_bubble("chimera", 0.001, 0.03, 0.06), with_bubble("1f1b", 0.25, 0.24, 0.27)});
  EXPECT_THAT(note, testing::StartsWith("bubble: the plain prediction lies below its interval (chimera 0.10 % against "
                                        "3.00 % .. 6.00 %). It takes every op at its mean;"));
  EXPECT_THAT(note, testing::HasSubstr("compare the measured bubble with the interval\n"));
  EXPECT_EQ(std::count(note.begin(), note.end(), '\n'), 1);
}

// --calibration: a validation is calibrated on its own group's past runs, and one whose group
// has too few gets a warning that names it, its group and the count.
TEST(ValidationOutput, CalibrateAllWarnsWhereAGroupHasTooFewRuns) {
  CalibrationRuns runs;
  for (int i = 1; i <= 9; ++i) runs.scores["cpu gpt-tiny"].push_back(i / 100.0);
  for (int i = 1; i <= 5; ++i) runs.scores["cpu gpt-tiny, device threads sharing cores"].push_back(0.5);
  std::vector<Validation> all(2);
  for (Validation& v : all) {
    v.interval.time_per_iteration = {95, 97, 100, 103, 105};
    v.measured.time_per_iteration = 112;
  }
  all[0].schedule.name = "1f1b";
  all[1].schedule.name = "amdp";
  all[1].core_use = CoreUse{};
  const std::vector<std::string> warnings = calibrate_all(all, runs, "cpu", "gpt-tiny");
  ASSERT_TRUE(all[0].calibrated && all[0].calibrated->widening);
  EXPECT_DOUBLE_EQ(*all[0].calibrated->widening, 0.09);
  EXPECT_TRUE(all[0].calibrated->inside);
  ASSERT_TRUE(all[1].calibrated);
  EXPECT_FALSE(all[1].calibrated->widening);
  EXPECT_EQ(warnings, std::vector<std::string>{"--calibration: amdp (cpu gpt-tiny, device threads sharing cores): 5 past "
                                               "runs, 9 needed: no calibrated interval"});
  Tally t = tally(all);
  EXPECT_EQ(t.calibrated, 1u);
  EXPECT_EQ(t.calibrated_inside, 1u);
}

}  // namespace
}  // namespace pipesim
