#pragma once
// A Gantt chart of one simulated run as inline SVG: one row per device, time left to
// right, coloured by kind of work (traces/html_style.hpp).
//
// Each device row has a compute lane (F/B/I/W/OPT ops; idle time shows the lane's grey
// background, so bubbles are visible), and, when the run has any, a thin communication
// lane (the device's outgoing transfers, link_start..arrival) and a thin sync lane
// (GradSync collectives it takes part in). Ops get a label "F3" (stage and pipeline are
// added where the device holds several: "2F3", "1:F3") or just the micro-batch "3" when
// that is what fits; every shape has a <title> tooltip with its exact times.
//
// Large runs: when more than `max_shapes` shapes would be drawn, every lane is aggregated
// instead: per device and kind, busy intervals are merged at pixel resolution (gaps under
// one pixel vanish), and the compute lane is split into one strip per kind. The result
// says so, so the page can tell the reader.
//
// The chart is a function of (schedule, timeline, time range, width) only, so two runs
// (e.g. predicted and measured) drawn with the same range and width line up when stacked.
#include <cstddef>
#include <string>
#include <vector>

#include "schedules/schedule.hpp"
#include "sim/timeline.hpp"
#include "traces/html_style.hpp"
#include "traces/time_axis.hpp"

namespace pipesim {

struct GanttOptions {
  TimeRange range;                // empty: [0, end of the timeline]
  int width = 1200;               // px, whole picture
  std::size_t max_shapes = 2000;  // more shapes than this: aggregate
  std::string caption;            // drawn above the rows (e.g. "predicted"); empty: none
};

struct GanttChart {
  std::string svg;
  std::vector<WorkKind> kinds;  // kinds drawn, in WorkKind order (for the legend)
  std::size_t shapes = 0;       // ops, transfers and collective slices with time in range
  bool aggregated = false;
  Tick ns_per_px = 0;  // time one pixel covers
};

// The timeline must belong to the schedule (its OpRefs index schedule.ops).
GanttChart render_gantt(const Schedule& schedule, const Timeline& timeline, const GanttOptions& options = {});

}  // namespace pipesim
