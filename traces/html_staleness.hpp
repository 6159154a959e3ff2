#pragma once
// Weight staleness per stage as an inline SVG bar chart: for each stage, the largest and
// the mean weight mismatch (updates between a micro-batch's forward and its backward) and
// the largest gradient delay (updates between the weights a gradient was computed on and
// the update that applies it), from Metrics::staleness (sim/versions.hpp defines them).
#include <string>

#include "sim/metrics.hpp"

namespace pipesim {

struct StalenessChart {
  std::string svg;     // empty when every value is zero (a synchronous schedule)
  std::string legend;  // HTML
};

StalenessChart render_staleness_chart(const Staleness& staleness, int width = 1200);

}  // namespace pipesim
