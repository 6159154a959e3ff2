#pragma once
// Core use: how much of the cores' time the devices' compute ops filled, predicted and
// measured, where more device threads than cores share them (`validate` on the CPU: AMDP at
// p = 4 on 2 cores). The simulator puts ops and GradSync's copies on a core; a device
// thread's other work (its messages' hand-offs and wake-ups, a GradSync's sum) takes core time from
// the other devices' ops there, and the run's cores compute less of the time than
// predicted: 77-93 % against 99 % for AMDP gpt-tiny on the 2-vCPU VM of
// docs/validation/cpu-history.md ("Where AMDP gpt-tiny's time goes"). Validate reports both and warns when they differ by more
// than the tolerance, so that such an error is not read as the cost model's.
#include <optional>
#include <string>

#include "core/units.hpp"
#include "executor/executor.hpp"
#include "sim/resources.hpp"
#include "sim/timeline.hpp"

namespace pipesim {

struct CoreUse {
  int cores = 0;
  double predicted = 0;  // shares of cores x the counted iterations' span
  double measured = 0;
  // An op's slowdown with the device threads taking turns on the cores: the profile's
  // shared-core turns (1 where it has none), and the prediction's (profile_slowdowns: those
  // out of their noise, less the interference curve's part).
  KindFactors profile_turns = kNoSlowdown, turns = kNoSlowdown;
  // Shares of the device threads' CPU time (MeasuredRun::thread_cpu) in GradSync's copies
  // (the simulator's GradSync work, on a core), and outside their ops and those copies: work
  // the simulator puts on no core. Negative: not measured.
  double copies = -1;
  double outside_ops = -1;
  // The compute ops' CPU time over the whole run, in seconds: predicted, the cores' time the
  // simulated ops filled (core_use over the run x cores x its span: the pool's work); measured,
  // the device threads' clocks within their ops (ThreadCpu::ops_s, summed). Measured above
  // predicted: the ops needed more of a core than the profile said; equal, with the run
  // slower than predicted: the cores ran something else. And all of the device threads' CPU
  // time (ThreadCpu::total_s, summed), and each run's span (its makespan): what share of the
  // cores' time the threads had. Negative: not measured.
  double ops_cpu_predicted_s = -1;
  double ops_cpu_measured_s = -1;
  double threads_cpu_measured_s = -1;
  double span_predicted_s = -1, span_measured_s = -1;
};

// Those shares of a run's threads: the sums of copies and of (total - ops - copies) over the
// sum of total; both -1 when they took no CPU time at all (or none was measured).
struct ThreadShares {
  double copies = -1, outside_ops = -1;
  double ops_s = 0;    // the threads' CPU time within their ops, summed
  double total_s = 0;  // and in all
};
ThreadShares thread_shares(const std::vector<ThreadCpu>& threads);

// The share of `cores` x [begin, end) during which compute ops of `timeline` ran, at most
// `cores` of them counted at once (the executor's records are wall-clock: an op preempted by
// another device's thread still counts, but no more than the cores). 0 for an empty span.
double core_use(const Timeline& timeline, Tick begin, Tick end, int cores);

// "amdp: core use (4 device threads on 2 cores): predicted 99.23 %, measured 88.89 % of the
// cores' time in the counted iterations;" and, indented on lines of their own, the turns
// (profile's, predicted) and the threads' CPU time outside their ops where measured.
std::string core_use_line(const std::string& schedule, int devices, const CoreUse& use);

// The warning when the measured use is below the predicted by more than `tolerance` (a
// fraction, in points of use); empty otherwise.
std::string core_use_warning(const std::string& schedule, const CoreUse& use, double tolerance);

}  // namespace pipesim
