#pragma once
// What the executor's devices share on this machine (sim/resources.hpp), so that a
// prediction of a run (`pipesim validate`) has the contention the run will have:
//
//   cpu    one thread per device, all on the cores this process may use: one pool over those
//          cores, queued (4 device threads on 2 cores: an op whose thread finds both cores
//          taken waits for one) or time-sliced (each at half speed while all four compute),
//          and the profile's interference curve (memory bandwidth and caches shared by
//          threads on different cores); with more threads than cores, the profile's
//          shared-core turns (each core alternates between devices, each with its own
//          weights through the core's caches).
//   cuda   the devices of one GPU (virtual devices, docs/gpu.md) form a pool: with their own
//          SMs each (--sm-partition on / auto) they slow each other by the profile's
//          interference curve only; sharing all SMs (off) an op runs at 1/k of its speed
//          with k busy (the profile timed it on the whole GPU) times the curve.
#include <string>
#include <vector>

#include "core/units.hpp"
#include "cost_models/profiled.hpp"
#include "sim/resources.hpp"

namespace pipesim {

struct ExecutorLayout {
  std::string backend = "cpu";  // "cpu" or "cuda"
  int devices = 1;
  int cores = 1;                // cpu: cores this process may run on
  // cpu, more device threads than cores: false, a thread that wakes to a ready op waits for a
  // core and then runs the op to its end (ops shorter than the kernel's time slice, a few ms:
  // gpt-tiny, gpt-small's measured ops are not stretched); true, the kernel time-slices the
  // running threads (processor sharing: ops much longer than the slice).
  bool time_sliced = false;
  int devices_per_gpu = 1;      // cuda: virtual devices on one GPU
  bool own_sms = true;          // cuda: each device has its own SM partition
};

// Each device's slowdown on the CPU when `validate` pins device d to core d % cores (devices
// <= cores) with `core_slowdown[c]` that core's block-pass time over the profile's; with more
// devices than cores the threads are not pinned and each device gets the cores' mean.
std::vector<double> device_slowdowns(int devices, const std::vector<double>& core_slowdown);

// The time slice Linux's scheduler (EEVDF, 6.6 and later; CFS's minimum granularity before)
// gives a thread among others on `cores` cores: 0.75 ms x (1 + log2(min(cores, 8))), its
// default (kernel/sched/fair.c, sysctl_sched_base_slice with logarithmic tunable scaling).
Tick kernel_time_slice(int cores);

// The layout of a run of `devices` devices on `backend` with --sm-partition `sm_partition`
// (auto counts as own SMs; a run that falls back says so in its warnings). `typical_op`: a
// forward's duration alone; on the CPU, ops longer than 4 time slices are time-sliced,
// shorter ones queue for a core (ExecutorLayout::time_sliced).
ExecutorLayout executor_layout(const std::string& backend, int devices, const std::string& sm_partition,
                               Tick typical_op);

// The description for the engine; `curves` from the profile (empty: no interference), and
// `turns` its shared-core turns (cpu, more device threads than cores: ops that follow another
// device's on their core).
SharedHardware shared_hardware(const ExecutorLayout& layout, const SlowdownCurves& curves,
                               const KindFactors& turns = kNoSlowdown);

// `curves` with every factor within `noise` of 1 (a profile's repeat spread, (p90 - p10) /
// median) taken as 1: a slowdown the profile cannot tell from its own noise is not applied
// (on a quiet 2-core VM gpt-small's measured curve is 1.00 +- 0.13 at spreads of 0.05-0.2).
SlowdownCurves beyond_noise(SlowdownCurves curves, double noise);
// `turns` with every factor whose `evidence` (ProfiledCostModel::turn_evidence: standard
// errors of its medians' or its means' ratio above 1) is 2 or less taken as 1, and every
// factor below 1: a slowdown the measurement cannot tell from none at about 95 % is not
// applied, and an op cannot gain from sharing its core with other devices (its caches hold
// their data), so a factor below 1 is the measurement's noise (gpt-small's forward measured
// x0.948 in 5 turns on the 2-vCPU VM).
KindFactors beyond_noise(KindFactors turns, const KindFactors& evidence);

// A profile's interference curve and shared-core turns as a prediction applies them, the
// one rule for `validate` and `simulate --cost --share-cores`: the curve beyond the profile's
// repeat spread; the turns where they stand out of their noise (above) and, where the profile's ring
// ran on `cores` > 1 cores, less the curve's part: its turns ran beside cores - 1 others
// computing, which a pool's curve applies on its own (curve[cores - 1]); none below 1.
struct ProfileSlowdowns {
  SlowdownCurves curves;
  KindFactors turns = kNoSlowdown;
};
ProfileSlowdowns profile_slowdowns(const ProfiledCostModel& costs);

}  // namespace pipesim
