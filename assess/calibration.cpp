#include "assess/calibration.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace pipesim {

double conformity_score(const PastPrediction& past) {
  PIPESIM_ASSERT(past.p50 > 0 && past.p5 <= past.p50 && past.p50 <= past.p95);
  return std::max(past.p5 - past.measured, past.measured - past.p95) / past.p50;
}

int min_calibration_runs(double miscoverage) {
  PIPESIM_ASSERT(miscoverage > 0 && miscoverage < 1);
  // The smallest n with ceil((1 - a)(n + 1)) <= n, i.e. n >= (1 - a) / a; the 1e-9 keeps
  // 0.9 / 0.1 = 8.999... from rounding up to 10.
  return static_cast<int>(std::ceil((1 - miscoverage) / miscoverage - 1e-9));
}

std::optional<double> conformal_widening(std::vector<double> scores, double miscoverage) {
  PIPESIM_ASSERT(miscoverage > 0 && miscoverage < 1);
  const auto n = static_cast<double>(scores.size());
  if (static_cast<int>(scores.size()) < min_calibration_runs(miscoverage)) return std::nullopt;
  const auto k = static_cast<std::size_t>(std::ceil((1 - miscoverage) * (n + 1) - 1e-9));
  PIPESIM_ASSERT(k >= 1 && k <= scores.size());
  std::nth_element(scores.begin(), scores.begin() + static_cast<std::ptrdiff_t>(k - 1), scores.end());
  return scores[k - 1];
}

CalibratedRange calibrated_range(const Percentiles& t, double widening) {
  PIPESIM_ASSERT(std::isfinite(widening) && t.p5 <= t.p95);
  if (!(t.p50 > 0)) return {t.p5, t.p95};
  const double narrowest = -(t.p95 - t.p5) / (2 * t.p50);  // both ends at the midpoint
  const double q = std::max(widening, narrowest);
  return {std::max(0.0, t.p5 - q * t.p50), t.p95 + q * t.p50};
}

}  // namespace pipesim
