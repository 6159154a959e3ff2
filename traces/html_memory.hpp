#pragma once
// Memory over time as inline SVG: one step line per device (from Timeline::memory), on the
// same horizontal TimeFrame as the Gantt chart so the two line up, against the device
// capacity when one is known. A run on a model adds each device's static memory (weights,
// gradients, optimizer state, buffers) to its activations, so the line is what the GPU
// holds; otherwise the chart shows activation memory alone.
//
// The line is drawn at pixel resolution: each pixel column shows the most memory held at
// any moment within it, so peaks never disappear however many changes there are (a p=64,
// m=1024 run has about a quarter of a million). When no record has a byte size (the run
// had no --activation-memory), the chart counts activations held instead, and says so.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "schedules/schedule.hpp"
#include "sim/timeline.hpp"
#include "traces/report_assessment.hpp"
#include "traces/time_axis.hpp"

namespace pipesim {

struct MemoryChartOptions {
  TimeRange range;  // empty: [0, end of the timeline]
  int width = 1200;
  std::optional<std::int64_t> capacity_bytes;  // per device; drawn as a dashed line
  // Bytes each device holds all the time, added to its activations; empty: activations
  // only. One per device of the schedule.
  std::vector<std::int64_t> static_bytes;
  double plot_height = 200;
};

struct MemoryChart {
  std::string svg;
  std::string legend;              // HTML: which colour is which device
  bool bytes = true;               // false: the values are activations held, not bytes
  std::int64_t peak = 0;           // most held by one device at once (bytes or activations)
  std::vector<int> over_capacity;  // devices whose peak exceeds capacity_bytes
};

MemoryChart render_memory_chart(const Schedule& schedule, const Timeline& timeline,
                                const MemoryChartOptions& options = {});

// What each device's GPU holds at its peak, as horizontal stacked bars (weights, gradients,
// optimizer state, buffers, activations) against the GPU's capacity; `legend` names the
// parts. Devices over the capacity are labelled in red with their overshoot.
struct MemoryBreakdownChart {
  std::string svg;
  std::string legend;
};
MemoryBreakdownChart render_memory_breakdown(const std::vector<ReportDeviceMemory>& devices, std::int64_t capacity,
                                             int width = 1200);

}  // namespace pipesim
