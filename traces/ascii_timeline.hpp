#pragma once
// Compact text pictures of a schedule, for `pipesim schedule --format text` and for tests.
//
// render_ascii_timeline: one row per device, time left to right (tiny 1F1B, F 1 ms, B 2 ms):
//
//         0         5       9
//   dev0 |F0F1....B0bb..B1bb|
//   dev1 |..F0B0bbF1B1bb....|
//   F forward, B backward; label = kind + micro-batch (F3), lower case continues an op, '.' idle
//   time: 1 unit = 1.000 ms, 2 columns per unit
//
//   The time unit is the gcd of all op start and end times, so every op boundary falls on
//   a column boundary; each unit gets as many columns as the widest label needs to fit in
//   the shortest op, as long as the row stays within max_width. A timeline longer than
//   max_width units is scaled down instead: the unit becomes a round duration (1, 2, 2.5,
//   5 x 10^k ns) that fits, times are rounded to the nearest column (ops shorter than a
//   column may be hidden) and the time line says so. An op is drawn as its label followed
//   by its kind letter in lower case up to its end. Labels: "F3" (kind + micro-batch),
//   "O" for the optimizer, "1:F3" in pipeline 1, "2F3" (stage first) where a device holds
//   several stages (interleaved, ZB-V); a block too narrow drops the pipeline, then the
//   stage, then the micro-batch. The ruler counts time units (the last number is the end
//   of the row). Only compute ops are drawn (GradSync runs on the communication stream);
//   zero-length ops take no room.
//
// render_ascii_order: the op lists only, no timing, one line per device:
//   dev0: 0F0 0F1 0B0 0B1
#include <string>

#include "schedules/schedule.hpp"
#include "sim/timeline.hpp"

namespace pipesim {

struct AsciiTimelineOptions {
  int max_width = 200;  // columns available for the time axis (at least 1)
  bool legend = true;   // append the legend and time-unit lines
};

std::string render_ascii_timeline(const Schedule& schedule, const Timeline& timeline,
                                  const AsciiTimelineOptions& options = {});

std::string render_ascii_order(const Schedule& schedule);

}  // namespace pipesim
