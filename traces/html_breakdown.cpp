#include "traces/html_breakdown.hpp"

#include <algorithm>
#include <cmath>

#include "traces/html_style.hpp"
#include "traces/svg.hpp"

namespace pipesim {
namespace {

double total(const BreakdownBar& bar) {
  double sum = 0;
  for (double s : bar.seconds) sum += s;
  return sum;
}

// "4.000 ms" in `unit`.
std::string in_unit(double seconds, TimeUnit unit) {
  return format_fixed_number(seconds * 1e9 / static_cast<double>(unit.ns), 3) + " " + std::string(unit.name);
}

}  // namespace

std::vector<BreakdownBar> device_bars(const TimeBreakdown& b) {
  std::vector<BreakdownBar> out;
  for (int d = 0; d < static_cast<int>(b.per_device.size()); ++d) {
    BreakdownBar bar{"dev " + std::to_string(d), {}, d == b.critical_device};
    for (TimeCategory c : kTimeCategories) bar.seconds[static_cast<std::size_t>(c)] = b.per_iteration_s(d, c);
    out.push_back(std::move(bar));
  }
  out.push_back(mean_bar(b, "mean"));
  return out;
}

BreakdownBar mean_bar(const TimeBreakdown& b, std::string label) {
  BreakdownBar bar{std::move(label), {}, false};
  for (TimeCategory c : kTimeCategories) bar.seconds[static_cast<std::size_t>(c)] = b.mean_per_iteration_s(c);
  return bar;
}

BreakdownChart render_breakdown_bars(const std::vector<BreakdownBar>& bars, std::string_view title, int width) {
  BreakdownChart chart;
  std::vector<TimeCategory> shown;
  for (TimeCategory c : kTimeCategories)
    if (std::any_of(bars.begin(), bars.end(), [&](const BreakdownBar& b) { return b.seconds[static_cast<std::size_t>(c)] > 0; }))
      shown.push_back(c);
  chart.legend = "<div class=\"legend\">";
  for (TimeCategory c : shown)
    chart.legend += "<span><i class=\"sw " + std::string(time_category_class(c)) + "\"></i>" +
                    xml_escape(time_category_label(c)) + "</span>";
  chart.legend += "</div>\n";

  double most = 0;
  for (const BreakdownBar& b : bars) most = std::max(most, total(b));
  const TimeUnit unit = time_unit_for(static_cast<Tick>(std::llround(most * 1e9)));
  const double most_in_unit = most * 1e9 / static_cast<double>(unit.ns);
  const double step = most_in_unit > 0 ? nice_step(most_in_unit, 6) : 1.0;
  const double ticks = std::max(1.0, std::ceil(most_in_unit / step - 1e-9));
  const double axis_top = ticks * step;  // in the unit
  const int n = static_cast<int>(bars.size());
  const double row = n <= 16 ? 22 : std::max(4.0, 352.0 / n), bar_h = row * 0.7;
  std::size_t longest_label = 0;
  for (const BreakdownBar& b : bars) longest_label = std::max(longest_label, b.label.size() + (b.critical ? 2 : 0));
  const double left = std::clamp(8.0 + 7.0 * static_cast<double>(longest_label), 64.0, 260.0), right = 110, top = 24;
  const double plot = std::max(100.0, width - left - right);
  const double bottom = top + row * n;
  auto x = [&](double seconds) { return left + seconds * 1e9 / static_cast<double>(unit.ns) / axis_top * plot; };

  SvgWriter svg(width, bottom + 34, "timebars", std::string(title));
  svg.text(left, 14, std::string(title) + " (" + std::string(unit.name) + " per iteration)", "atitle");
  svg.open_group("axis");
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  for (int i = 0; i <= static_cast<int>(ticks); ++i) {
    const double at = left + i * step / axis_top * plot;
    svg.line(at, top, at, bottom, "grid");
    svg.text(at, bottom + 16, format_fixed_number(i * step, decimals), "tick", "middle");
  }
  svg.close_group();
  for (int i = 0; i < n; ++i) {
    const BreakdownBar& b = bars[static_cast<std::size_t>(i)];
    const double y = top + row * i + (row - bar_h) / 2;
    const double sum = total(b);
    if (row >= 14) svg.text(left - 8, y + bar_h / 2 + 4, b.label + (b.critical ? " *" : ""), "rowlbl", "end");
    double at = 0;
    for (TimeCategory c : shown) {
      const double s = b.seconds[static_cast<std::size_t>(c)];
      if (s <= 0) continue;
      const std::string share = sum > 0 ? format_fixed_number(100.0 * s / sum, 1) + "%" : "0%";
      svg.rect(x(at), y, x(at + s) - x(at), bar_h, time_category_class(c),
               b.label + " " + std::string(time_category_label(c)) + ": " + in_unit(s, unit) + " (" + share +
                   " of the iteration)");
      at += s;
    }
    if (row >= 14) svg.text(x(at) + 6, y + bar_h / 2 + 4, in_unit(sum, unit), "tick");
  }
  chart.svg = svg.finish();
  return chart;
}

}  // namespace pipesim
