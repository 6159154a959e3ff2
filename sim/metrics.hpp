#pragma once
// Metrics: the numbers people compare schedules by, derived from one SimResult.
//
// Two bubble conventions exist and are never mixed (spec §2):
//   bubble_ratio           idle / (devices x makespan)   (GPipe, Chimera, ZB papers)
//   bubble_ratio_megatron  idle / busy, i.e. idle/ideal  (Megatron-LM)
// A device's idle time is makespan - busy: it counts every moment the device computes
// nothing, including before its first op and after its last.
#include <cstdint>
#include <string>
#include <vector>

#include "schedules/schedule.hpp"
#include "sim/engine.hpp"

namespace pipesim {

struct DeviceMetrics {
  int device = 0;
  Tick busy = 0;
  Tick idle = 0;
  std::int32_t peak_activations = 0;
  std::int64_t peak_activation_bytes = 0;
};

struct Metrics {
  std::string schedule;
  int devices = 0;
  int stages = 0;
  int microbatches = 0;
  int iterations = 1;
  std::size_t ops = 0;
  Tick makespan = 0;
  Tick busy = 0;  // summed over devices
  Tick idle = 0;  // summed over devices
  double bubble_ratio = 0;
  double bubble_ratio_megatron = 0;
  std::vector<DeviceMetrics> per_device;
  std::vector<std::string> critical_path;  // op text with device, first to last
};

Metrics summarize(const Schedule& schedule, const SimResult& result);

}  // namespace pipesim
