#pragma once
// Prediction intervals: N simulations of one schedule, each on its own draw of a profiled
// cost model's op durations (cost_models/sampled.hpp), and the percentiles over them of the
// time per iteration and of the bubble. `simulate`, `compare` and `validate --samples` all
// call this one loop; one Simulator serves every draw (it keeps its buffers).
#include <cstdint>
#include <vector>

#include "cost_models/profiled.hpp"
#include "schedules/schedule.hpp"
#include "sim/engine.hpp"

namespace pipesim {

inline constexpr int kMaxSamples = 100000;

struct Sampling {
  int samples = 0;  // 1..kMaxSamples (PIPESIM_ASSERT; the CLI checks the flag)
  std::uint64_t seed = 0;
  int warmup_iterations = 0;  // left out of the time per iteration (summarize's `warmup`)
  // The machine's speed, as far as it is known (validate's core-speed probes before and after
  // a run: tools/validate_core_speeds.hpp's machine_draws): row k is every device's
  // device_slowdown in draw k, `samples` rows. Empty: the hardware's speeds in every draw.
  std::vector<std::vector<double>> device_slowdown_draws;
};

// Percentiles of one quantity over the draws: linear interpolation between order statistics
// (core/percentile.hpp).
struct Percentiles {
  double p5 = 0, p10 = 0, p50 = 0, p90 = 0, p95 = 0;
};
Percentiles percentiles_of(std::vector<double> values);  // values non-empty

struct PredictionInterval {
  Sampling sampling;
  Percentiles time_per_iteration;  // ns (sim/metrics.hpp's time_per_iteration)
  Percentiles bubble_ratio;        // idle / (devices x makespan)
  // Whether a measured time per iteration lies inside [p5, p95].
  bool contains(Tick measured) const {
    const auto t = static_cast<double>(measured);
    return t >= time_per_iteration.p5 && t <= time_per_iteration.p95;
  }
};

// Draws 0 .. samples-1 of `sampling.seed`, each simulated on `simulator` on `hardware` (null:
// nothing shared; device_slowdown_draws needs hardware with device speeds, and rows of their
// length, PIPESIM_ASSERT). The same arguments give the same interval, bit for bit.
// InputError as simulate().
PredictionInterval predict_interval(Simulator& simulator, const Schedule& schedule, const ProfiledCostModel& costs,
                                    const Sampling& sampling, const SharedHardware* hardware = nullptr);

}  // namespace pipesim
