#pragma once
// Calibrated prediction intervals: how far this machine's past validations fell outside
// their predicted [p5, p95], carried over to a new prediction (split conformal prediction on
// quantile intervals, "conformalized quantile regression": Romano, Patterson and Candes,
// NeurIPS 2019).
//
// The sampled interval (assess/prediction_interval.hpp) holds what the profile measured: its
// ops' spread and the cores' speed between the probes. It does not hold what the cost model
// gets wrong (a core slower in the run than in any probe, ops that contend in ways the
// profile never timed), so on a noisy machine the measurement falls outside it more often
// than 10 % of the time. Each past validation i gives a score, how far outside its interval
// the measurement fell, relative to its p50 (negative: inside, by that much):
//
//   s_i = max(p5_i - measured_i, measured_i - p95_i) / p50_i
//
// With n scores, Q is the ceil((1 - a)(n + 1))-th smallest (a = 0.1 for [p5, p95]), and the
// calibrated interval of a new prediction is [p5 - Q p50, p95 + Q p50]. If the past runs and
// the new one are exchangeable (the same machine, model and kind of schedule, as noisy), the
// new measurement lies inside it with probability at least 1 - a, whatever the noise is. It
// needs n >= (1 - a) / a past runs (9 for a = 0.1): with fewer, Q is not defined.
#include <optional>
#include <vector>

#include "assess/prediction_interval.hpp"

namespace pipesim {

inline constexpr double kIntervalMiscoverage = 0.1;  // [p5, p95]: 10 % of the draws outside

// One past validation's sampled interval and measurement (one unit for all four).
struct PastPrediction {
  double p5 = 0, p50 = 0, p95 = 0, measured = 0;
};

// s = max(p5 - measured, measured - p95) / p50. p5 <= p50 <= p95 and p50 > 0 (PIPESIM_ASSERT).
double conformity_score(const PastPrediction& past);

// The fewest past runs that define Q: ceil((1 - miscoverage) / miscoverage).
int min_calibration_runs(double miscoverage = kIntervalMiscoverage);

// Q from the scores: the ceil((1 - miscoverage)(n + 1))-th smallest; none with fewer than
// min_calibration_runs(miscoverage) scores. 0 < miscoverage < 1 (PIPESIM_ASSERT).
std::optional<double> conformal_widening(std::vector<double> scores, double miscoverage = kIntervalMiscoverage);

// [p5 - Q p50, p95 + Q p50] of a new prediction's time per iteration; a negative Q (past
// intervals wider than needed) narrows it, at most to its midpoint, and the low end stays >= 0.
struct CalibratedRange {
  double p5 = 0, p95 = 0;
  bool contains(double measured) const { return measured >= p5 && measured <= p95; }
};
CalibratedRange calibrated_range(const Percentiles& time_per_iteration, double widening);

}  // namespace pipesim
