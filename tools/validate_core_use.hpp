#pragma once
// Core use: how much of the cores' time the devices' compute ops filled, predicted and
// measured, where more device threads than cores share them (`validate` on the CPU: AMDP at
// p = 4 on 2 cores). The simulator puts only ops on a core; a device thread's other work
// (its messages' hand-offs and wake-ups, a GradSync's copies and sum) takes core time from
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
  // An op's slowdown after another device's op on its core: the profile's shared-core
  // turns (1 where it has none), and the prediction's (those out of the profile's noise).
  KindFactors profile_turns = kNoSlowdown, turns = kNoSlowdown;
  // The share of the device threads' CPU time outside their ops (MeasuredRun::thread_cpu):
  // work the simulator puts on no core. Negative: not measured.
  double outside_ops = -1;
};

// outside_ops of a run's threads: the sum of (total - ops) over the sum of total; -1 when
// they took no CPU time at all (or none was measured).
double outside_ops_share(const std::vector<ThreadCpu>& threads);

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
