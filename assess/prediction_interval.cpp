#include "assess/prediction_interval.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/percentile.hpp"
#include "cost_models/sampled.hpp"
#include "sim/metrics.hpp"

namespace pipesim {
namespace {

// One draw simulated: everything the engine is given goes through here.
SimResult simulate_draw(Simulator& simulator, const Schedule& schedule, const CostModel& draw,
                        const SharedHardware* hardware) {
  return simulator.run(schedule, draw, nullptr, nullptr, hardware);
}

}  // namespace

Percentiles percentiles_of(std::vector<double> values) {
  PIPESIM_ASSERT(!values.empty());
  std::sort(values.begin(), values.end());
  return {percentile(values, 0.05), percentile(values, 0.10), percentile(values, 0.50), percentile(values, 0.90),
          percentile(values, 0.95)};
}

PredictionInterval predict_interval(Simulator& simulator, const Schedule& schedule, const ProfiledCostModel& costs,
                                    const Sampling& sampling, const SharedHardware* hardware) {
  PIPESIM_ASSERT(sampling.samples >= 1 && sampling.samples <= kMaxSamples);
  std::vector<double> times, bubbles;
  times.reserve(static_cast<std::size_t>(sampling.samples));
  bubbles.reserve(static_cast<std::size_t>(sampling.samples));
  const std::vector<std::vector<double>>& machine = sampling.device_slowdown_draws;
  PIPESIM_ASSERT(machine.empty() ||
                 (hardware != nullptr && machine.size() == static_cast<std::size_t>(sampling.samples)));
  SharedHardware moved = machine.empty() ? SharedHardware{} : *hardware;  // copied only for the machine term
  for (int k = 0; k < sampling.samples; ++k) {
    const SampledCostModel draw(costs, sampling.seed, static_cast<std::uint64_t>(k));
    if (!machine.empty()) {  // the machine's speed this draw
      const std::vector<double>& row = machine[static_cast<std::size_t>(k)];
      PIPESIM_ASSERT(row.size() == hardware->device_slowdown.size());
      moved.device_slowdown = row;
    }
    const SimResult result = simulate_draw(simulator, schedule, draw, machine.empty() ? hardware : &moved);
    const Metrics m = summarize(schedule, result, sampling.warmup_iterations);  // the one rule for both quantities
    times.push_back(static_cast<double>(m.time_per_iteration));
    bubbles.push_back(m.bubble_ratio);
  }
  return {sampling, percentiles_of(std::move(times)), percentiles_of(std::move(bubbles))};
}

}  // namespace pipesim
