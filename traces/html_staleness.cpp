#include "traces/html_staleness.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "traces/svg.hpp"

namespace pipesim {
namespace {

struct Series {
  std::string_view css_class;
  std::string_view name;
};
constexpr std::array<Series, 3> kSeries = {{
    {"bmax", "max mismatch"},
    {"bmean", "mean mismatch"},
    {"bdelay", "max gradient delay"},
}};

double mean(std::int64_t sum, std::int64_t count) {
  return count > 0 ? static_cast<double>(sum) / static_cast<double>(count) : 0.0;
}

}  // namespace

StalenessChart render_staleness_chart(const Staleness& staleness, int width) {
  StalenessChart chart;
  chart.legend = "<div class=\"legend\">";
  for (const Series& s : kSeries)
    chart.legend += "<span><i class=\"sw " + std::string(s.css_class) + "\"></i>" + std::string(s.name) + "</span>";
  chart.legend += "</div>\n";

  const auto& stages = staleness.per_stage;
  std::vector<std::array<double, 3>> values;
  double top_value = 0;
  for (const StageStaleness& st : stages) {
    values.push_back(
        {static_cast<double>(st.max_mismatch), mean(st.mismatch_sum, st.backwards), static_cast<double>(st.max_delay)});
    for (double v : values.back()) top_value = std::max(top_value, v);
  }
  if (top_value <= 0) return chart;

  const double w = std::max(width, 200), left = 76, right = 18, top = 26, h = 160;
  const double plot_w = w - left - right, bottom = top + h;
  const double step = std::max(1.0, nice_step(top_value, 5));  // counts of updates: whole ticks
  const double ticks = std::ceil(top_value / step - 1e-9);
  const double axis_top = ticks * step;
  auto y = [&](double v) { return bottom - v / axis_top * h; };

  SvgWriter svg(w, bottom + 34, "staleness", "weight staleness per stage");
  svg.text(left - 8, 14, "updates", "atitle");
  svg.open_group("axis");
  for (int i = 0; i <= static_cast<int>(ticks); ++i) {
    svg.line(left, y(i * step), left + plot_w, y(i * step), "grid");
    svg.text(left - 6, y(i * step) + 4, format_fixed_number(i * step, 0), "tick", "end");
  }
  svg.line(left, bottom, left + plot_w, bottom, "base");
  const double group = plot_w / static_cast<double>(stages.size());
  const double bar = std::min(18.0, group * 0.8 / 3);
  const int label_every = std::max(1, static_cast<int>(std::ceil(28.0 / group)));  // labels 28 px apart
  for (std::size_t i = 0; i < stages.size(); ++i)
    if (static_cast<int>(i) % label_every == 0)
      svg.text(left + group * (static_cast<double>(i) + 0.5), bottom + 15, std::to_string(stages[i].stage), "tick",
               "middle");
  svg.text(left + plot_w / 2, bottom + 29, "stage", "atitle", "middle");
  svg.close_group();

  for (std::size_t i = 0; i < stages.size(); ++i) {
    const StageStaleness& st = stages[i];
    const double x0 = left + group * (static_cast<double>(i) + 0.5) - 1.5 * bar;
    const std::array<std::string, 3> titles = {
        "stage " + std::to_string(st.stage) + ": max mismatch " + std::to_string(st.max_mismatch) + " over " +
            std::to_string(st.backwards) + " backwards (" + std::to_string(st.mismatched) + " mismatched)",
        "stage " + std::to_string(st.stage) + ": mean mismatch " + format_fixed_number(values[i][1], 3),
        "stage " + std::to_string(st.stage) + ": max gradient delay " + std::to_string(st.max_delay) + ", mean " +
            format_fixed_number(mean(st.delay_sum, st.gradients), 3) + " over " + std::to_string(st.gradients) +
            " gradients"};
    for (std::size_t s = 0; s < kSeries.size(); ++s) {
      if (values[i][s] <= 0) continue;
      svg.rect(x0 + bar * static_cast<double>(s), y(values[i][s]), bar, bottom - y(values[i][s]), kSeries[s].css_class,
               titles[s]);
    }
  }
  chart.svg = svg.finish();
  return chart;
}

}  // namespace pipesim
