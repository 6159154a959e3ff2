#include "traces/html_lines.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "traces/svg.hpp"

namespace pipesim {
namespace {

constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

int decimals_for(double step) { return step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step))); }

}  // namespace

std::string line_chart_svg(const std::string& label, const std::string& x_label, const std::string& y_label,
                           const std::vector<LineSeries>& series) {
  constexpr double kWidth = 760, kHeight = 320, kLeft = 60, kRight = 170, kTop = 16, kBottom = 44;
  double x_max = 0, y_min = std::numeric_limits<double>::max(), y_max = 0;
  for (const LineSeries& s : series)
    for (const auto& [x, y] : s.points) {
      x_max = std::max(x_max, x);
      y_min = std::min(y_min, y);
      y_max = std::max(y_max, y);
    }
  if (y_min > y_max) y_min = 0;
  const double y_step = nice_step(std::max(y_max - y_min, 1e-9), 6), x_step = nice_step(std::max(x_max, 1e-9), 8);
  const double y_lo = std::floor(y_min / y_step) * y_step, y_hi = std::ceil(y_max / y_step) * y_step + (y_max == y_min ? y_step : 0);
  const double x_hi = std::ceil(std::max(x_max, 1e-9) / x_step) * x_step;
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  const auto px = [&](double x) { return kLeft + x / x_hi * pw; };
  const auto py = [&](double y) { return kTop + (y_hi - y) / (y_hi - y_lo) * ph; };
  SvgWriter svg(kWidth, kHeight, "lines", label);
  for (double y = y_lo; y <= y_hi + y_step / 2; y += y_step) {
    svg.line(kLeft, py(y), kLeft + pw, py(y), "grid");
    svg.text(kLeft - 6, py(y) + 4, format_fixed_number(y, decimals_for(y_step)), "tick", "end");
  }
  for (double x = 0; x <= x_hi + x_step / 2; x += x_step) {
    svg.line(px(x), kTop + ph, px(x), kTop + ph + 4, "axis");
    svg.text(px(x), kTop + ph + 16, format_fixed_number(x, decimals_for(x_step)), "tick", "middle");
  }
  svg.line(kLeft, kTop + ph, kLeft + pw, kTop + ph, "axis");
  svg.line(kLeft, kTop, kLeft, kTop + ph, "axis");
  svg.text(kLeft + pw / 2, kHeight - 6, x_label, "label", "middle");
  svg.text(14, kTop + ph / 2, y_label, "label", "middle");
  for (std::size_t k = 0; k < series.size(); ++k) {
    const LineSeries& s = series[k];
    const char* colour = kColours[k % std::size(kColours)];
    std::string d;
    for (const auto& [x, y] : s.points) d += (d.empty() ? "M" : " L") + svg_coord(px(x)) + " " + svg_coord(py(y));
    if (!d.empty()) svg.path(d, "series", colour, s.name);
    const double ly = kTop + 14 + 18 * static_cast<double>(k);
    svg.path("M" + svg_coord(kLeft + pw + 12) + " " + svg_coord(ly - 4) + " L" + svg_coord(kLeft + pw + 32) + " " +
                 svg_coord(ly - 4),
             "series", colour);
    svg.text(kLeft + pw + 38, ly, s.name, "legend");
  }
  return svg.finish();
}

std::string line_chart_page(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + xml_escape(title) +
         "</title>\n<style>body{font:14px sans-serif;margin:24px;color:#222}pre{background:#f6f6f6;padding:8px;"
         "overflow-x:auto}.grid{stroke:#e4e4e4}.axis{stroke:#444}.series{fill:none;stroke-width:2}.tick,.legend{"
         "font-size:11px}.label{font-size:12px}</style></head><body>\n<h1>" +
         xml_escape(title) + "</h1>\n" + body + "</body></html>\n";
}

}  // namespace pipesim
