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

}  // namespace
}  // namespace pipesim
