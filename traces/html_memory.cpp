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
// `base`: what the device holds besides the records' values.
std::vector<std::int64_t> column_max(const Timeline& t, int device, bool bytes, std::int64_t base,
                                     const TimeFrame& frame, std::size_t columns) {
  std::vector<std::int64_t> max(columns, -1), last(columns, -1);
  std::int64_t before = base;  // held when the range begins
  const double scale = frame.scale();
  for (const MemoryRecord& r : t.memory) {
    if (r.device != device) continue;
    const std::int64_t v = base + (bytes ? r.bytes : r.activations);
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
  const bool totals = !options.static_bytes.empty();
  PIPESIM_ASSERT(!totals || options.static_bytes.size() == static_cast<std::size_t>(n));
  chart.bytes = totals || std::any_of(timeline.memory.begin(), timeline.memory.end(),
                                      [](const MemoryRecord& r) { return r.bytes > 0; });
  const auto base = [&](int d) { return totals ? options.static_bytes[static_cast<std::size_t>(d)] : 0; };
  std::vector<std::int64_t> peaks(static_cast<std::size_t>(std::max(n, 0)), 0);
  for (int d = 0; d < n; ++d) peaks[static_cast<std::size_t>(d)] = base(d);
  for (const MemoryRecord& r : timeline.memory) {
    PIPESIM_ASSERT(r.device >= 0 && r.device < n);
    auto& p = peaks[static_cast<std::size_t>(r.device)];
    p = std::max(p, base(r.device) + (chart.bytes ? r.bytes : std::int64_t{r.activations}));
  }
  for (std::int64_t p : peaks) chart.peak = std::max(chart.peak, p);
  // "78.8 GiB (40.2 GiB static + 38.6 GiB activations)" with static memory, else the peak.
  const auto peak_text = [&](int d) {
    const std::int64_t peak = peaks[static_cast<std::size_t>(d)];
    std::string text = value_text(peak, chart.bytes);
    if (totals)
      text += " = " + format_bytes(static_cast<double>(base(d))) + " static + " +
              format_bytes(static_cast<double>(peak - base(d))) + " activations";
    return text;
  };
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

  SvgWriter svg(frame.width, bottom + kTimeAxisHeight + 2, "memory",
               totals ? "memory per GPU over time, static and activations" : "activation memory over time per device");
  svg.text(frame.left - 8, 14,
           totals       ? "memory per GPU: static + activations (" + std::string(axis_unit.name) + ")"
           : chart.bytes ? "activation memory (" + std::string(axis_unit.name) + ")"
                         : "activations held",
           "atitle");
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
    const std::vector<std::int64_t> m = column_max(timeline, d, chart.bytes, base(d), frame, columns);
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
    svg.path(path, "mem", series_colour(d, n), "device " + std::to_string(d) + ": peak " + peak_text(d));
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

MemoryBreakdownChart render_memory_breakdown(const std::vector<ReportDeviceMemory>& devices, std::int64_t capacity,
                                             int width) {
  struct Part {
    const char* css;
    const char* name;
    std::int64_t ReportDeviceMemory::*bytes;
  };
  static constexpr Part kParts[] = {{"mw", "weights", &ReportDeviceMemory::weights},
                                    {"mg", "gradients", &ReportDeviceMemory::gradients},
                                    {"mo", "optimizer state", &ReportDeviceMemory::optimizer},
                                    {"mb", "buffers", &ReportDeviceMemory::buffers},
                                    {"ma", "activations (peak)", &ReportDeviceMemory::activations}};
  MemoryBreakdownChart chart;
  chart.legend = "<div class=\"legend\">";
  for (const Part& p : kParts)
    chart.legend += std::string("<span><i class=\"sw ") + p.css + "\"></i>" + p.name + "</span>";
  chart.legend += "<span><i class=\"sw line\" style=\"background:#b3261e\"></i>capacity " +
                  format_bytes(static_cast<double>(capacity)) + "</span></div>\n";

  const int n = static_cast<int>(devices.size());
  std::int64_t most = capacity;
  for (const ReportDeviceMemory& d : devices) most = std::max(most, d.total());
  const ByteUnit unit = byte_unit_for(static_cast<double>(most));
  const double step = nice_step(static_cast<double>(most) / unit.bytes, 6);
  const double ticks = std::ceil(static_cast<double>(most) / unit.bytes / step - 1e-9);
  const double axis_top = ticks * step * unit.bytes;
  // Rows of 20 px up to 16 devices, thinner beyond (labels only where they fit).
  const double row = n <= 16 ? 20 : std::max(4.0, 320.0 / n), bar = row * 0.7;
  const double left = 64, right = 150, top = 24, plot = std::max(100.0, width - left - right);
  const double bottom = top + row * n;
  auto x = [&](double bytes) { return left + bytes / axis_top * plot; };

  SvgWriter svg(width, bottom + 34, "membars", "memory per GPU at its peak, by part, per device");
  svg.text(left, 14, "memory per GPU at its peak (" + std::string(unit.name) + ")", "atitle");
  svg.open_group("axis");
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  for (int i = 0; i <= static_cast<int>(ticks); ++i) {
    const double v = i * step * unit.bytes;
    svg.line(x(v), top, x(v), bottom, "grid");
    svg.text(x(v), bottom + 16, format_fixed_number(i * step, decimals), "tick", "middle");
  }
  svg.close_group();
  for (int d = 0; d < n; ++d) {
    const ReportDeviceMemory& m = devices[static_cast<std::size_t>(d)];
    const double y = top + row * d + (row - bar) / 2;
    const bool over = m.total() > capacity;
    if (row >= 14)
      svg.text(left - 8, y + bar / 2 + 4, "dev " + std::to_string(d), over ? "rowlbl over" : "rowlbl", "end");
    double at = 0;
    for (const Part& p : kParts) {
      const auto bytes = static_cast<double>(m.*p.bytes);
      if (bytes <= 0) continue;
      std::string title = "device " + std::to_string(d) + " " + p.name + ": " + format_bytes(bytes);
      if (p.bytes == &ReportDeviceMemory::weights && m.weight_copies > 1)
        title += " (" + std::to_string(m.weight_copies) + " copies)";
      svg.rect(x(at), y, x(at + bytes) - x(at), bar, p.css, title);
      at += bytes;
    }
    if (row >= 14) {
      std::string label = format_bytes(static_cast<double>(m.total()));
      if (over) label += " (over by " + format_bytes(static_cast<double>(m.total() - capacity)) + ")";
      svg.text(x(at) + 6, y + bar / 2 + 4, label, over ? "tick over" : "tick");
    }
  }
  const double cx = x(static_cast<double>(capacity));
  svg.line(cx, top - 4, cx, bottom, "cap");
  svg.text(cx, top - 8, "capacity " + format_bytes(static_cast<double>(capacity)), "caplbl", "middle");
  chart.svg = svg.finish();
  return chart;
}

}  // namespace pipesim
