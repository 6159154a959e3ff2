#pragma once
// The horizontal time frame the report's time charts share (Gantt, memory), so charts
// stacked on a page line up: the same range and width give the same x for the same time.
// Design for `validate`: a predicted and a measured timeline drawn with one TimeFrame are
// directly comparable.
#include "core/units.hpp"
#include "sim/timeline.hpp"
#include "traces/svg.hpp"

namespace pipesim {

struct TimeRange {
  Tick begin = 0;
  Tick end = 0;  // end <= begin: "the whole timeline" where a range is optional
  bool empty() const { return end <= begin; }
};

// Last moment anything happens in the timeline: op end, transfer arrival, collective end.
Tick timeline_end(const Timeline& timeline);

struct TimeFrame {
  TimeRange range;      // not empty
  double width = 1200;  // whole picture, px
  double left = 76;     // room for row labels
  double right = 18;    // room for the last tick label

  double plot_width() const { return width - left - right; }
  // Pixels per nanosecond.
  double scale() const { return plot_width() / static_cast<double>(range.end - range.begin); }
  double x(Tick t) const { return left + static_cast<double>(t - range.begin) * scale(); }
  // Nanoseconds one pixel covers, rounded up (for "1 px = ..." notes).
  Tick ns_per_px() const;
};

// A frame over `range`, or over [0, timeline_end] (at least 1 ns) when it is empty.
TimeFrame make_time_frame(const TimeRange& range, const Timeline& timeline, int width);

// Vertical grid lines from y_top to y_bottom at round times, tick labels below y_bottom
// and the axis title "time (ms)" under them; takes 30 px below y_bottom.
void draw_time_axis(SvgWriter& svg, const TimeFrame& frame, double y_top, double y_bottom);
inline constexpr double kTimeAxisHeight = 30;

}  // namespace pipesim
