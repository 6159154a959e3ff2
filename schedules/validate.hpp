#pragma once
// Schedule validation: builds the dependency DAG with Boost.Graph (device-order edges,
// data edges of the spec's §3, and collective edges) and reports everything wrong with a
// schedule, not only the first thing.
//
//   - ops out of range, ops on a device that does not hold their stage, duplicate ops
//   - missing ops: a producer nobody runs, a forward with no backward, I without W,
//     a micro-batch that runs both B and I at one stage
//   - a backward listed before its forward on the same device
//   - cycles: a cycle is a deadlock; reported as the chain of ops (and devices) that wait
//     on each other
//
// With durations it also gives the critical-path lower bound: the longest path through the
// DAG, i.e. the makespan with zero-cost links (any real link can only add to it).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "schedules/schedule.hpp"

namespace pipesim {

struct ValidationReport {
  std::vector<std::string> errors;   // one line each, device and position first
  std::vector<std::string> cycle;    // a deadlock: "0B0 (device 0)" ... in waits-for order
  std::int64_t critical_path = -1;   // lower bound on the makespan, ns; -1 if not computed
  std::vector<std::string> critical_path_ops;  // the ops on it, first to last
  bool ok() const { return errors.empty(); }
};

// Duration of an op for the critical path, asked for compute ops and for a GradSync's
// collective (with the GradSync op); sends and receives take none.
using DurationFn = std::function<std::int64_t(const Op&)>;

// Throws InputError only if the schedule's shape is inconsistent (or the critical path
// overflows 64-bit time); everything else is reported. Without `duration`, the critical path is not computed.
ValidationReport validate(const Schedule& schedule, const DurationFn& duration = {});

}  // namespace pipesim
