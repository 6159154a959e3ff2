#include "traces/time_axis.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace pipesim {

Tick timeline_end(const Timeline& timeline) {
  Tick end = 0;
  for (const auto& r : timeline.ops) end = std::max(end, r.end);
  for (const auto& r : timeline.transfers) end = std::max(end, r.arrival);
  for (const auto& r : timeline.collectives) end = std::max(end, r.end);
  for (const auto& r : timeline.memory) end = std::max(end, r.time);
  return end;
}

Tick TimeFrame::ns_per_px() const { return static_cast<Tick>(std::ceil(1.0 / scale())); }

TimeFrame make_time_frame(const TimeRange& range, const Timeline& timeline, int width) {
  TimeFrame frame;
  frame.range = range;
  if (frame.range.empty()) frame.range = {0, std::max<Tick>(1, timeline_end(timeline))};
  frame.width = std::max(width, 200);
  return frame;
}

void draw_time_axis(SvgWriter& svg, const TimeFrame& frame, double y_top, double y_bottom) {
  const Tick span = frame.range.end - frame.range.begin;
  PIPESIM_ASSERT(span > 0);
  // About one label per 90 px keeps labels like "1234.5" apart.
  const int max_ticks = std::max(2, static_cast<int>(frame.plot_width() / 90));
  const Tick step = nice_step_ticks(span, max_ticks);
  const TimeUnit unit = time_unit_for(frame.range.end);
  svg.open_group("axis");
  const Tick first = (frame.range.begin + step - 1) / step * step;
  for (Tick t = first; t <= frame.range.end; t += step) {
    const double x = frame.x(t);
    svg.line(x, y_top, x, y_bottom + 4, "grid");
    svg.text(x, y_bottom + 15, format_time_tick(t, step, unit), "tick", "middle");
  }
  svg.line(frame.left, y_bottom, frame.left + frame.plot_width(), y_bottom, "base");
  svg.text(frame.left + frame.plot_width() / 2, y_bottom + 28, "time (" + std::string(unit.name) + ")", "atitle",
           "middle");
  svg.close_group();
}

}  // namespace pipesim
