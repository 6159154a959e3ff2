#pragma once
// The prediction intervals of `--samples N` in an HTML report (ReportOptions::intro_html):
// one row per schedule, p10 / p50 / p90 of the time per iteration and of the bubble over N
// draws of the profile's measured distributions (assess/prediction_interval.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "core/units.hpp"

namespace pipesim {

struct ReportInterval {
  std::string schedule;
  Tick time_p10 = 0, time_p50 = 0, time_p90 = 0;  // per iteration
  double bubble_p10 = 0, bubble_p50 = 0, bubble_p90 = 0;
  // validate --calibration: "1.20 s .. 1.31 s" (tools/validate_calibration.hpp); a column
  // when some row has one.
  std::string calibrated;
};

// Why an interval's p50 may lie above the plain prediction, even above its p90: said under
// every intervals table (terminal and HTML), since it reads as a mistake otherwise.
inline constexpr const char* kIntervalsAboveThePlainPrediction =
    "The plain prediction takes every op at its mean; where devices wait on each other, each op's "
    "variation becomes waiting, so the draws' p50 lies above it (docs/cost-model.md, Prediction intervals).";

std::string intervals_html(const std::vector<ReportInterval>& rows, int samples, std::uint64_t seed);

}  // namespace pipesim
