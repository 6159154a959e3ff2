#pragma once
// A measured run's losses for people and programs (`pipesim run`, `pipesim converge`): the
// training loss of every iteration (mean over its micro-batches, at the end of its last
// forward) and the validation points (executor/reference.hpp's Validator).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/executor.hpp"
#include "traces/chrome_trace.hpp"

namespace pipesim {

// When each iteration's last loss was computed (ns since the start), by iteration.
std::vector<Tick> iteration_end_times(const MeasuredRun& run);

// A loss as the outputs write it: "2.3456", 4 decimals.
std::string loss_text(double loss);
// "loss ...\n" and "validation ...\n" lines of the summary.
std::string loss_lines(const MeasuredRun& run);
// Iteration, training loss, validation loss, wall time: the validation points (and the
// last iteration), or up to 10 evenly spaced iterations without validation.
std::string loss_table(const MeasuredRun& run);
// {"iteration_loss", "iteration_end_s", "validation": [{iteration, loss, time_s}]} members.
void add_loss_json(nlohmann::ordered_json& j, const MeasuredRun& run);
// An HTML page: training and validation loss against iterations and against wall time
// (inline SVG), and the loss table; `heading` (escaped) says what ran.
std::string loss_report(const std::string& heading, const MeasuredRun& run);

// Counters "training loss" and "validation loss" on the device of pipeline 0's last stage.
std::vector<TraceCounter> loss_counters(const Schedule& schedule, const MeasuredRun& run);

}  // namespace pipesim
