#include "traces/html_memory.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "traces/html_style.hpp"
#include "traces/svg.hpp"

namespace pipesim {
namespace {

constexpr double kTop = 26;  // room for the axis title above the plot

std::string value_text(std::int64_t v, bool bytes) {
  return bytes ? format_bytes(static_cast<double>(v)) : std::to_string(v) + (v == 1 ? " activation" : " activations");
}

// Per pixel column, the most a device holds at any moment in it: the value it enters the
// column with, or any value set inside it.
std::vector<std::int64_t> column_max(const Timeline& t, int device, bool bytes, const TimeFrame& frame,
                                     std::size_t columns) {
  std::vector<std::int64_t> max(columns, -1), last(columns, -1);
  std::int64_t before = 0;  // held when the range begins
  const double scale = frame.scale();
  for (const MemoryRecord& r : t.memory) {
    if (r.device != device) continue;
    const std::int64_t v = bytes ? r.bytes : r.activations;
    if (r.time < frame.range.begin) {
      before = v;
      continue;
    }
    if (r.time > frame.range.end) break;
    const auto c =
        std::min(columns - 1, static_cast<std::size_t>(static_cast<double>(r.time - frame.range.begin) * scale));
    max[c] = std::max(max[c], v);
    last[c] = v;
  }
  std::int64_t held = before;
  for (std::size_t c = 0; c < columns; ++c) {
    const std::int64_t enter = held;
    if (last[c] >= 0) held = last[c];
    max[c] = std::max(enter, max[c]);
  }
  return max;
}

}  // namespace

MemoryChart render_memory_chart(const Schedule& schedule, const Timeline& timeline, const MemoryChartOptions& options) {
  MemoryChart chart;
  const TimeFrame frame = make_time_frame(options.range, timeline, options.width);
  const int n = schedule.num_devices;
  chart.bytes =
      std::any_of(timeline.memory.begin(), timeline.memory.end(), [](const MemoryRecord& r) { return r.bytes > 0; });
  std::vector<std::int64_t> peaks(static_cast<std::size_t>(std::max(n, 0)), 0);
  for (const MemoryRecord& r : timeline.memory) {
    PIPESIM_ASSERT(r.device >= 0 && r.device < n);
    auto& p = peaks[static_cast<std::size_t>(r.device)];
    p = std::max(p, chart.bytes ? r.bytes : std::int64_t{r.activations});
  }
  for (std::int64_t p : peaks) chart.peak = std::max(chart.peak, p);
  const bool capacity = chart.bytes && options.capacity_bytes.has_value() && *options.capacity_bytes > 0;
  if (capacity)
    for (int d = 0; d < n; ++d)
      if (peaks[static_cast<std::size_t>(d)] > *options.capacity_bytes) chart.over_capacity.push_back(d);

  // Vertical scale: round ticks in one unit, the top a whole tick above the largest of
  // peak and capacity.
  double top_value = static_cast<double>(std::max<std::int64_t>(chart.peak, 1));
  if (capacity) top_value = std::max(top_value, static_cast<double>(*options.capacity_bytes));
  const ByteUnit axis_unit = chart.bytes ? byte_unit_for(top_value) : ByteUnit{"", 1};
  double step = nice_step(top_value / axis_unit.bytes, 5);
  if (!chart.bytes) step = std::max(1.0, step);  // activations are whole numbers
  const double ticks = std::ceil(top_value / axis_unit.bytes / step - 1e-9);
  const double axis_top = ticks * step * axis_unit.bytes;
  const double h = options.plot_height, bottom = kTop + h;
  auto y = [&](double v) { return bottom - v / axis_top * h; };
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));

  SvgWriter svg(frame.width, bottom + kTimeAxisHeight + 2, "memory", "activation memory over time per device");
  svg.text(frame.left - 8, 14,
           chart.bytes ? "activation memory (" + std::string(axis_unit.name) + ")" : "activations held", "atitle");
  svg.open_group("axis");
  for (int i = 0; i <= static_cast<int>(ticks); ++i) {
    const double v = i * step;
    svg.line(frame.left, y(v * axis_unit.bytes), frame.left + frame.plot_width(), y(v * axis_unit.bytes), "grid");
    svg.text(frame.left - 6, y(v * axis_unit.bytes) + 4, format_fixed_number(v, decimals), "tick", "end");
  }
  svg.close_group();
  draw_time_axis(svg, frame, kTop, bottom);

  const auto columns = static_cast<std::size_t>(std::max(1.0, std::ceil(frame.plot_width())));
  for (int d = 0; d < n; ++d) {
    const std::vector<std::int64_t> m = column_max(timeline, d, chart.bytes, frame, columns);
    // Step line at pixel resolution: h to where the value changes, v to the new value.
    // Relative moves in whole columns and tenths of a pixel keep the path short (a ramp
    // changes every column) and free of rounding drift.
    auto tenths = [&](std::int64_t v) { return std::llround(y(static_cast<double>(v)) * 10); };
    long long y_now = tenths(m[0]);
    std::size_t x_now = 0;
    std::string path = "M" + svg_coord(frame.left) + " " + format_fixed_number(static_cast<double>(y_now) / 10, 1);
    for (std::size_t c = 1; c < columns; ++c) {
      if (m[c] == m[c - 1]) continue;
      const long long y_next = tenths(m[c]);
      path += "h" + std::to_string(c - x_now) + "v" + format_fixed_number(static_cast<double>(y_next - y_now) / 10, 1);
      x_now = c;
      y_now = y_next;
    }
    path += "H" + svg_coord(frame.left + frame.plot_width());
    svg.path(path, "mem", series_colour(d, n),
             "device " + std::to_string(d) + ": peak " + value_text(peaks[static_cast<std::size_t>(d)], chart.bytes));
  }
  if (capacity) {
    const double cy = y(static_cast<double>(*options.capacity_bytes));
    svg.line(frame.left, cy, frame.left + frame.plot_width(), cy, "cap");
    svg.text(frame.left + frame.plot_width() - 4, cy - 5,
             "capacity " + format_bytes(static_cast<double>(*options.capacity_bytes)), "caplbl", "end");
  }
  chart.svg = svg.finish();

  // Legend: every device when they are few; the ends of the colour ramp otherwise.
  chart.legend = "<div class=\"legend\">";
  auto entry = [&](int d) {
    chart.legend += "<span><i class=\"sw line\" style=\"background:" + series_colour(d, n) + "\"></i>dev " +
                    std::to_string(d) + " (peak " +
                    xml_escape(value_text(peaks[static_cast<std::size_t>(d)], chart.bytes)) + ")</span>";
  };
  if (n <= 8) {
    for (int d = 0; d < n; ++d) entry(d);
  } else {
    entry(0);
    entry(n / 2);
    entry(n - 1);
    chart.legend += "<span>(colours run from device 0 to device " + std::to_string(n - 1) + ")</span>";
  }
  if (capacity)
    chart.legend += "<span><i class=\"sw line\" style=\"background:#b3261e\"></i>capacity " +
                    format_bytes(static_cast<double>(*options.capacity_bytes)) + "</span>";
  chart.legend += "</div>\n";
  return chart;
}

}  // namespace pipesim
