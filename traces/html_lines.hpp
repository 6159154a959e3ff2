#pragma once
// A line chart as inline SVG (the loss curves of `pipesim converge`'s report): one
// polyline per series on linear axes with round-number ticks, a legend, hover titles.
// Byte-identical markup for the same input (traces/svg.hpp).
#include <string>
#include <utility>
#include <vector>

namespace pipesim {

struct LineSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), in x order
};

std::string line_chart_svg(const std::string& label, const std::string& x_label, const std::string& y_label,
                           const std::vector<LineSeries>& series);

// A self-contained HTML page around `body` (markup: charts, escaped text) with the charts'
// style; `title` is escaped.
std::string line_chart_page(const std::string& title, const std::string& body);

}  // namespace pipesim
