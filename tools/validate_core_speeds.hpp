#pragma once
// validate --core-speeds measure (the default on the CPU): how fast each core this process may
// use runs the model's block pass now, over the profile's time (kernels/core_speeds.hpp). The
// run pins device d's thread to core d where every device has a core, and the prediction
// gives each device its core's factor (executor/shared_layout.hpp's device_slowdowns,
// sim/resources.hpp's device_slowdown): the factor holds both a core slower than the others
// and the whole machine's drift since the profile was taken.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost_models/model_spec.hpp"
#include "cost_models/profile.hpp"

namespace pipesim {

inline constexpr int kCoreSpeedRounds = 5;       // visits per core, in turns
inline constexpr double kCoreSpeedDwell = 0.01;  // seconds of block passes per visit
// A factor beyond 1/4 .. 4 says the profile is not of this machine as it is now (a profile
// taken under other load: seen at x0.098 during a parallel test run); none is applied then.
inline constexpr double kMaxCoreFactor = 4;

// Each usable core's block-pass time now over the profile's.
struct CoreSpeeds {
  std::vector<int> cores;       // CPU ids; device d's thread runs on cores[d % size] (devices <= cores)
  std::vector<double> slowdown;  // per core: the median over all its passes
  std::vector<std::vector<double>> visits;  // per core: each visit's median, over the profile's time
};

// Measured at micro-batch size b; none (empty) when the profile has no block timings at b,
// or, with a warning on stderr, when a thread cannot be moved to one of the cores or a
// factor is beyond 1/kMaxCoreFactor .. kMaxCoreFactor.
// `quiet`: no progress line on stderr.
CoreSpeeds measure_core_speeds(const ModelSpec& model, int b, const Profile& profile, bool quiet);

// How far the machine's speed moved between two measurements: the largest |after / before - 1|
// over the cores both measured; 0 when either is empty.
double speed_drift(const CoreSpeeds& before, const CoreSpeeds& after);

// The warning when the speed moved more than `tolerance` (a fraction) between the probes
// before and after `schedule`'s run: an error within it cannot be told from the machine's
// drift. Empty otherwise.
std::string drift_warning(const std::string& schedule, const CoreSpeeds& before, const CoreSpeeds& after,
                          double tolerance);

// The cores' speed the plain prediction takes for a run probed `before` and `after`: each
// core at the mean of its two factors, where the machine was halfway through the run (on the
// 2-vCPU VM, 617 past runs' errors rescaled to it: mean |error| 0.1-0.5 points lower than at
// the probe before in each of 5 sets, docs/validation/cpu.md). `before`'s alone for a core
// `after` did not probe. In `before`'s order of cores.
std::vector<double> speeds_during_run(const CoreSpeeds& before, const CoreSpeeds& after);

// The machine's speed in each of `samples` draws of the prediction interval (seed `seed`): a
// row per draw, each device's factor (device_slowdowns of the cores'). How well the probes
// know each core's speed enters as a bootstrap: each draw takes, per core and probe, the
// median of as many of its visits drawn with replacement (5 visits: a core whose visits
// spread 10 % is known to a few %, not exactly). The machine's drift during the run enters as
// one point u per draw, the same for every core, between the probe before and the one after
// (`after` empty: not probed; a probe without visits counts at its median). Empty when
// `before` has no factors. Deterministic in (seed, draw, core).
std::vector<std::vector<double>> machine_draws(int devices, const CoreSpeeds& before, const CoreSpeeds& after,
                                               int samples, std::uint64_t seed);

// [{"core": 0, "slowdown": 1.02, "visits": [1.01, 1.03, ...]}, ...]
nlohmann::ordered_json speeds_json(const CoreSpeeds& speeds);

// "core speeds: a block pass takes x1.220 (core 0), x1.000 (core 1) the profile's time before
// the first run, ..." and a newline; empty without factors.
std::string speeds_line(const CoreSpeeds& speeds);

}  // namespace pipesim
