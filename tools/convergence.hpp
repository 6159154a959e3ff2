#pragma once
// `pipesim converge`'s results and their outputs (tools/cmd_converge.cpp): per schedule and
// seed the validation curve measured on the proxy model, iterations to the target loss, the
// staleness measured beside it, and the time per iteration (simulated, or measured on the
// proxy), as a table, JSON and an HTML report with inline SVG plots.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/executor.hpp"
#include "sim/metrics.hpp"

namespace pipesim {

struct SeedCurve {
  std::uint64_t seed = 0;
  std::vector<ValidationPoint> validation;  // by iteration
  std::vector<double> training;             // mean training loss of each iteration
  Tick measured_iteration = 0;              // the proxy run's steady-state time per iteration
  Staleness staleness;                      // as measured in the proxy run
};

struct ScheduleConvergence {
  std::string schedule;
  Tick simulated_iteration = 0;  // with --model: the analytical cost model's; 0 without
  std::vector<SeedCurve> seeds;
};

struct ConvergenceSettings {
  std::string proxy, data, optimizer;
  double lr = 0;
  int p = 0, m = 0, iterations = 0;
  std::string model, hardware;  // model empty: times measured on the proxy
  double target = 0;
  bool target_chosen = false;  // --target 0: common_target()
};

// The highest of every (schedule, seed)'s lowest validation loss: a loss each run reaches.
double common_target(const std::vector<ScheduleConvergence>& results);
// The first validation point at or below `target`, if any.
std::optional<std::int32_t> iterations_to(const SeedCurve& curve, double target);

std::string convergence_text(const ConvergenceSettings& s, const std::vector<ScheduleConvergence>& results);
nlohmann::ordered_json convergence_json(const ConvergenceSettings& s, const std::vector<ScheduleConvergence>& results);
void write_convergence_report(std::ostream& out, const ConvergenceSettings& s,
                              const std::vector<ScheduleConvergence>& results);

}  // namespace pipesim
