#pragma once
// What `pipesim validate` concludes from its comparisons: the machine's load before and after
// the runs and the spread of the profile's repeats (the two things that make a comparison
// meaningless), and the verdict against --tolerance: a schedule passes when its time per
// iteration is within the tolerance of the measured one, and the command fails (exit code 1,
// tools/exit_codes.hpp) when one does not.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipesim {

inline constexpr double kDefaultTolerance = 0.05;  // --tolerance 5 (%)

// The 1-minute load average of /proc/loadavg; nullopt where it cannot be read.
std::optional<double> load_average();

// The machine's CPU time so far, from the first line of /proc/stat (clock ticks): all of it,
// and the part the hypervisor gave to others while this VM's CPUs wanted to run (steal).
struct CpuTimes {
  std::uint64_t total = 0;
  std::uint64_t steal = 0;
};
std::optional<CpuTimes> cpu_times();
// The share of CPU time stolen between two readings; nullopt if either is missing or no
// time passed.
std::optional<double> steal_share(const std::optional<CpuTimes>& before, const std::optional<CpuTimes>& after);

// Above this share of stolen CPU time, the host of a VM ran others while it profiled or
// measured: op times vary with what the host does (a 2-core VM measured 13 % under load,
// with op repeats spreading 20-80 %, and 1 % idle).
inline constexpr double kStealWarning = 0.02;

struct MachineLoad {
  int cores = 0;  // hardware threads
  std::optional<double> before, after;
  // The run's own busy threads (its devices, at most the cores), which the 1-minute average
  // holds after the runs (a quiet 2-core machine reads about 1.6 after a 90 s run of two
  // devices), and the seconds between the two readings.
  int own_threads = 0;
  double seconds = 0;
  std::optional<double> steal;  // steal_share over profiling and runs
};

// The mean number of runnable threads besides the run's own while it ran, from the two
// readings: the 1-minute load average is an exponential average with a 60 s time constant,
// so after = before x d + (own + others) x (1 - d), d = exp(-seconds / 60). Runs under 15 s
// (where d is near 1 and the 5 s sampling of the average dominates): after - own x (1 - d).
// nullopt without an `after` reading.
std::optional<double> others_during(const MachineLoad& load);

// One line each (no "pipesim: warning: " prefix): the load above cores - 0.5 before the
// runs, or others_during above it (other work shared the cores the device threads ran on),
// and a repeat spread (cost_models/sampled.hpp's repeat_spread) above the tolerance.
std::vector<std::string> validity_warnings(const MachineLoad& load, double spread, double tolerance);

// "machine load 0.42 before, 1.87 after (1-minute average, 2 cores); profile repeats spread
// 2.10 % ((p90 - p10) / median, median over the block's passes)"
std::string conditions_line(const MachineLoad& load, double spread);
// {"cores", "before", "after", "others_during", "steal"}: --json's machine_load (nulls where
// not read).
nlohmann::ordered_json machine_load_json(const MachineLoad& load);

// Whether |error| is within the tolerance (fractions).
inline bool passes(double time_per_iteration_error, double tolerance) {
  return !(time_per_iteration_error > tolerance || time_per_iteration_error < -tolerance);
}

}  // namespace pipesim
