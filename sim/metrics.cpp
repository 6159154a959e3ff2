#include "sim/metrics.hpp"

#include "schedules/op_text.hpp"

namespace pipesim {

Metrics summarize(const Schedule& schedule, const SimResult& result) {
  Metrics m;
  m.schedule = schedule.name;
  m.devices = schedule.num_devices;
  m.stages = schedule.num_stages;
  m.microbatches = schedule.microbatches;
  m.iterations = schedule.iterations;
  m.ops = schedule.total_ops();
  m.makespan = result.makespan;
  for (int d = 0; d < schedule.num_devices; ++d) {
    const DeviceStats& s = result.devices[static_cast<std::size_t>(d)];
    DeviceMetrics dm{d, s.busy, result.makespan - s.busy, s.peak_activations, s.peak_activation_bytes};
    m.busy += dm.busy;
    m.idle += dm.idle;
    m.per_device.push_back(dm);
  }
  const double capacity = static_cast<double>(m.devices) * static_cast<double>(m.makespan);
  m.bubble_ratio = capacity > 0 ? static_cast<double>(m.idle) / capacity : 0.0;
  m.bubble_ratio_megatron = m.busy > 0 ? static_cast<double>(m.idle) / static_cast<double>(m.busy) : 0.0;
  for (const OpRef& ref : result.critical_path)
    m.critical_path.push_back(to_string(schedule.ops[static_cast<std::size_t>(ref.device)][static_cast<std::size_t>(ref.index)]) +
                              "@" + std::to_string(ref.device));
  return m;
}

}  // namespace pipesim
