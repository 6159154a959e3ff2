#pragma once
// Where the time goes (sim/breakdown.hpp) as horizontal stacked bars in inline SVG: one bar
// per device of a run and their mean, or one bar per run (the mean over its devices), each
// cut into the categories in time per iteration on one axis, so lengths compare. Hover a
// part for its time and share of the iteration.
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "sim/breakdown.hpp"

namespace pipesim {

struct BreakdownBar {
  std::string label;  // "dev 0", "mean", "1f1b"
  std::array<double, kNumTimeCategories> seconds{};  // per iteration
  bool critical = false;  // drawn with a "*": the device that computes longest
};

// The bars of a run's devices, then their mean.
std::vector<BreakdownBar> device_bars(const TimeBreakdown& b);
// A run's mean over its devices, named `label`.
BreakdownBar mean_bar(const TimeBreakdown& b, std::string label);

struct BreakdownChart {
  std::string svg;
  std::string legend;  // HTML: the categories shown (those not zero on every bar)
};
BreakdownChart render_breakdown_bars(const std::vector<BreakdownBar>& bars, std::string_view title, int width = 1200);

}  // namespace pipesim
