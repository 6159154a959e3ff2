// validate's conditions and verdict (tools/validate_verdict.hpp): when the machine's load or
// the profile's repeat spread make a comparison meaningless, and the tolerance's bounds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tools/validate_verdict.hpp"

namespace pipesim {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;
using testing::IsEmpty;

TEST(ValidityWarnings, LoadBeforeTheRunsAboveCoresMinusAHalf) {
  EXPECT_THAT(validity_warnings({2, 1.4, 1.4, 2}, 0.01, 0.05), IsEmpty());
  const auto w = validity_warnings({2, 1.8, 1.0, 2}, 0.01, 0.05);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "machine load 1.80 before the runs on 2 cores (above 1.5): other work shared the cores, so the "
                  "measured times say little about the schedule");
}

TEST(ValidityWarnings, LoadAfterTheRunsCountsOnlyWhatIsBeyondTheirOwnThreads) {
  EXPECT_THAT(validity_warnings({2, 0.2, 3.4, 2}, 0.01, 0.05), IsEmpty());  // 1.4 beyond the run's 2 threads
  const auto w = validity_warnings({2, 0.2, 3.6, 2}, 0.01, 0.05);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_THAT(w[0], HasSubstr("machine load 3.60 after the runs on 2 cores (above 1.5 beyond their own 2 device threads)"));
  EXPECT_THAT(validity_warnings({2, std::nullopt, std::nullopt, 2}, 0.01, 0.05), IsEmpty());  // no /proc/loadavg
}

TEST(ValidityWarnings, ASpreadAboveTheTolerance) {
  EXPECT_THAT(validity_warnings({8, 0.5, 0.5, 2}, 0.05, 0.05), IsEmpty());
  EXPECT_THAT(validity_warnings({8, 0.5, 0.5, 2}, 0.06, 0.05),
              ElementsAre("the profile's repeats spread 6.00 % (p10 to p90 of the block's passes), more than the "
                          "tolerance 5.00 %: an error within the tolerance cannot be told from noise"));
  EXPECT_EQ(validity_warnings({2, 1.9, 0.5, 2}, 0.2, 0.05).size(), 2u);  // one line each
}

TEST(Verdict, PassesWithinTheToleranceOnBothSides) {
  EXPECT_TRUE(passes(0.05, 0.05));
  EXPECT_TRUE(passes(-0.05, 0.05));
  EXPECT_FALSE(passes(0.0501, 0.05));
  EXPECT_FALSE(passes(-0.0501, 0.05));
}

TEST(ConditionsLine, SaysWhatIsUnknown) {
  EXPECT_EQ(conditions_line({2, 0.42, std::nullopt, 2}, 0.021),
            "machine load 0.42 before, unknown after (1-minute average, 2 cores); profile repeats spread 2.10 % "
            "((p90 - p10) / median, median over the block's passes)");
}

}  // namespace
}  // namespace pipesim
