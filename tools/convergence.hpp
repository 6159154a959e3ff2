#pragma once
// `pipesim converge`'s results and their outputs (tools/cmd_converge.cpp): per schedule and
// seed the validation curve measured on the proxy model, iterations to the target loss, the
// staleness measured beside it, and the time per iteration (simulated on a cost model, or
// measured on the proxy), as a table, JSON and an HTML report with inline SVG plots. With several learning
// rates every schedule runs at each; the answer takes each schedule's best (tuned_runs), and
// every rate's results stay beside it (the same-rate comparison).
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

// One schedule (a generator and its settings) trained at one learning rate, every seed.
struct ScheduleConvergence {
  std::string schedule;  // the row's name: the generator, and its settings that vary ("amp keys=2")
  nlohmann::ordered_json settings = nlohmann::ordered_json::object();  // every setting the generator reads
  double lr = 0;
  Tick simulated_iteration = 0;  // the cost model's (ConvergenceSettings::cost_model); 0 without
  std::vector<SeedCurve> seeds;
};

struct ConvergenceSettings {
  std::string proxy, data, optimizer;
  std::vector<double> rates;  // --lr: one rate for every schedule, or several to tune per schedule
  int p = 0, m = 0, iterations = 0;
  // The cost model that simulated the time per iteration, as the registry labels it
  // (tools/cost_model_registry.hpp); empty: times measured on the proxy.
  std::string cost_model;
  std::string model, hardware;  // what a model of one GPU type (analytical) simulated; else empty
  double target = 0;
  bool target_chosen = false;  // --target 0: common_target()
};

// `results` holds every (schedule, rate) run, rows of one schedule sharing its name. The
// target --target 0 chooses: per schedule, the lowest over its rates of the highest over seeds
// of a run's lowest validation loss; then the highest of these over the schedules. Every
// schedule reaches it on every seed at one rate at least (with one rate: every run reaches it).
double common_target(const std::vector<ScheduleConvergence>& results);
// The first validation point at or below `target`, if any.
std::optional<std::int32_t> iterations_to(const SeedCurve& curve, double target);

// The rule that tunes the rate, in words (printed with the answer).
extern const char* const kRateChoice;
// Per schedule, in the order of first appearance, the index in `results` of its run at its best
// rate for `target` (kRateChoice): the most seeds reaching the target, then the fewest
// iterations to it (median over seeds, the lower middle for an even count), then the lowest
// mean final validation loss, then the lower rate.
std::vector<std::size_t> tuned_runs(const std::vector<ScheduleConvergence>& results, double target);

std::string convergence_text(const ConvergenceSettings& s, const std::vector<ScheduleConvergence>& results);
nlohmann::ordered_json convergence_json(const ConvergenceSettings& s, const std::vector<ScheduleConvergence>& results);
void write_convergence_report(std::ostream& out, const ConvergenceSettings& s,
                              const std::vector<ScheduleConvergence>& results);

}  // namespace pipesim
