#include "assess/prediction_interval.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/percentile.hpp"
#include "cost_models/sampled.hpp"
#include "sim/metrics.hpp"

namespace pipesim {
namespace {

// Hash domain of the machine-speed draw, apart from the cost model's (cost_models/sampled.cpp).
constexpr std::uint64_t kMachineDomain = 0x6d616368696e65ull;  // "machine"

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
  const std::vector<double>& after = sampling.device_slowdown_after;
  PIPESIM_ASSERT(after.empty() || (hardware != nullptr && hardware->device_slowdown.size() == after.size()));
  SharedHardware moved = after.empty() ? SharedHardware{} : *hardware;  // copied only for the machine term
  for (int k = 0; k < sampling.samples; ++k) {
    const SampledCostModel draw(costs, sampling.seed, static_cast<std::uint64_t>(k));
    if (!after.empty()) {  // the machine's speed this draw: one point between the probes
      const double u = unit_interval(mix64(sampling.seed ^ mix64(static_cast<std::uint64_t>(k) ^ kMachineDomain)));
      for (std::size_t d = 0; d < after.size(); ++d)
        moved.device_slowdown[d] = hardware->device_slowdown[d] + u * (after[d] - hardware->device_slowdown[d]);
    }
    const SimResult result = simulate_draw(simulator, schedule, draw, after.empty() ? hardware : &moved);
    const Metrics m = summarize(schedule, result, sampling.warmup_iterations);  // the one rule for both quantities
    times.push_back(static_cast<double>(m.time_per_iteration));
    bubbles.push_back(m.bubble_ratio);
  }
  return {sampling, percentiles_of(std::move(times)), percentiles_of(std::move(bubbles))};
}

}  // namespace pipesim
