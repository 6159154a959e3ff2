#pragma once
// SharedHardware: what the devices of a run share, and how sharing slows them (issue #14).
//
// By default nothing is shared: each device has its own compute stream and each directed
// device pair its own FIFO link, and the engine runs its fast path (sim/engine.hpp). A
// description says where that is not so:
//
//   pools     devices whose compute ops run on one set of cores or one GPU. With k members
//             busy, each op runs at min(1, cores / k) of its speed alone (processor sharing;
//             cores 0: no limit), or queues for a core of its own (queue), and takes
//             slowdown[kind][j] times as long, j other members running (a measured
//             interference curve: memory bandwidth, caches, a GPU's launch path; past the
//             curve's end its last value holds). With more members than cores, each op
//             takes turn_slowdown[kind] times as long as well: its core alternates between
//             devices, each with its own weights and activations through the core's caches
//             (the profiler's shared-core turns, docs/profile-format.md).
//   nodes     devices on the same node talk over their own links as today; a transfer between
//             two nodes goes through the sender node's NICs and the receiver node's NICs,
//             which every transfer leaving (entering) the node shares, max-min fair, each
//             transfer at most one NIC's rate: its occupancy is the cost model's, at one
//             NIC's rate. Transfers on one directed link stay FIFO. A GradSync collective
//             spanning nodes is one such flow on the egress and ingress NICs of each node.
//   speeds    device d's compute ops take device_slowdown[d] times their cost model's time
//             (a slower core: the profiler's per-core speeds, the cores the executor pins
//             its device threads to); sharing and interference apply on top.
//   overlap   a device computing while a transfer it sends or receives is on the wire, or a
//             GradSync it takes part in runs: both take overlap_slowdown times as long (1:
//             overlap is free, as before).
//
// The engine (sim/sharing.hpp) turns ops and transfers into activities whose rates change
// at every start and finish on what they share; their remaining work carries over.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "schedules/op.hpp"

namespace pipesim {

// Per op kind, a slowdown curve: slowdown[kind][j] with j other pool members busy.
using SlowdownCurves = std::array<std::vector<double>, kNumOpKinds>;
// A curve's factor with `neighbours` other members busy: past the curve's end its last value
// holds. `curve` not empty.
inline double slowdown_at(const std::vector<double>& curve, std::size_t neighbours) {
  return curve[std::min(neighbours, curve.size() - 1)];
}
// Per op kind, one factor.
using KindFactors = std::array<double, kNumOpKinds>;
constexpr KindFactors kNoSlowdown = [] {
  KindFactors ones{};
  for (double& f : ones) f = 1;
  return ones;
}();

struct ComputePool {
  std::vector<int> devices;  // each device in at most one pool
  double cores = 0;          // this many cores (0: no limit), shared as `queue` says
  // false: processor sharing, k busy members each at min(1, cores / k) of full speed (a
  // scheduler that time-slices: ops much longer than its slice). true: an op runs at full
  // speed on a core of its own, and one that finds every core taken waits for the first to
  // free, in the order they came (ops shorter than the slice: a woken device thread waits for
  // a core, then runs its op to the end). Either way the curve below applies to those running.
  bool queue = false;
  // Interference: slowdown[kind][j] with j other members busy; slowdown[kind][0] is 1. An
  // empty curve: no interference for that kind.
  SlowdownCurves slowdown{};
  // More members than cores (cores > 0): a member's op takes turn_slowdown[kind] times its
  // work, on top of the above (its core last ran another device's op: that device's weights
  // and activations went through the core's caches). 1: as alone.
  KindFactors turn_slowdown = kNoSlowdown;
  bool takes_turns() const { return cores > 0 && static_cast<double>(devices.size()) > cores; }
};

// Pools of `size` consecutive devices each of 0 .. devices - 1 (the last may hold fewer), each
// `each` with its devices filled in: hosts of N device threads, GPUs of N virtual devices.
std::vector<ComputePool> consecutive_pools(int devices, int size, const ComputePool& each);

struct SharedHardware {
  std::vector<ComputePool> pools;
  std::vector<int> node_of_device;  // empty: every link independent
  int nics_per_node = 1;
  double overlap_slowdown = 1;
  std::vector<double> device_slowdown;  // empty: every device at its cost model's speed

  // True without pools, with one node (or none) and free overlap: the engine runs its fast
  // path, as without a description. A pool whose factors are all 1 still runs the shared
  // path (same times: tests/sharing_test.cpp checks that, byte for byte).
  bool shares_nothing() const;
  // The engine's table for `devices` devices; throws InputError naming what is wrong (a
  // device out of range or in two pools, cores < 0, a slowdown or turn slowdown below 0.1 or not
  // finite, nics_per_node < 1, overlap_slowdown < 1, a node or speed table of the wrong length, a
  // device slowdown below 0.1 or not finite).
  void check(int devices) const;
};

}  // namespace pipesim
