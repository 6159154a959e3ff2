#pragma once
// The q-quantile (0 <= q <= 1) of sorted values with linear interpolation between order
// statistics (numpy's default): the one rule the profile's statistics and the prediction
// intervals (assess/prediction_interval.hpp) use. `sorted` non-empty and ascending.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace pipesim {

inline double percentile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

// The lower median of `values`: the middle one, of an even count the lower of the two middle
// ones. An order statistic, not interpolated, so integer times stay what was measured (the
// error split's replay takes a link at its hand-offs' lower median). `values` non-empty.
template <class T>
T lower_median(std::vector<T> values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

}  // namespace pipesim
