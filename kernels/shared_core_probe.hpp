#pragma once
// The profiler's shared-core turns (kernels/profiler.hpp, docs/profile-format.md): how a
// device's ops slow down when device threads outnumber the cores and take turns on them, as
// a CPU run of AMDP's 4 devices on 2 cores does. Each op then runs on whichever core is free,
// right after other devices' ops went through that core's caches, on a thread that has just
// woken to its input.
//
// The probe runs that: `threads` unpinned threads, each a device with a workload and an
// optimizer of its own, in a ring on the machine's cores:
//
//   lap:  thread 0 ─turn─┐            thread 2 ─turn─┐          `cores` turns at once (here 2
//                        └─> thread 1 ─turn─┐         └─> thread 3 ─turn─   of 4 threads); each
//                                           └─> (2: done)                  other thread waits for
//                                                                          the one before it
//
// a turn being the stage's passes (stage_blocks blocks) and an Adam step over the stage's
// parameters. Timed: the turns of the threads that waited for theirs (in turns), and device
// 0's turn right after its own on the calling thread (alone), taken in alternation so that
// both see the same machine.
#include <cstdint>

#include "cost_models/model_spec.hpp"
#include "cost_models/profile.hpp"
#include "kernels/profile_backend.hpp"
#include "kernels/profiler.hpp"

namespace pipesim {

// The least wall time the turns are timed for where ProfileOptions::min_time_s asks for one
// (0: exactly `repeats`): a short stage's turns spread by a fifth (gpt-tiny on the 2-vCPU VM)
// and a preempted op's long time is rare, so their means need many. 1 s is about 80 laps of
// gpt-tiny's stage of 4 blocks; six profiles each at 0.25 s and at 1 s, in alternation
// (docs/validation/runs/2026-12-05f-cpu/turns-min-time/), spread the ratios of the means by a
// standard deviation of 0.139 and 0.063 (F), 0.101 and 0.049 (B), 0.31 and 0.20 (the step).
// A gpt-small turn takes about a second: its `repeats` laps take longer than this anyway.
inline constexpr double kSharedCoreMinTime = 1.0;

// The most device threads `pipesim profile --shared-core-threads` takes.
inline constexpr int kMaxSharedCoreThreads = 1024;

// The ring's device threads: ProfileOptions::shared_core_threads, or twice the usable cores.
int shared_core_threads(const ProfileOptions& o);

// Workload `w` (device 0) and threads - 1 more, at `micro_batch_size`, as above. Empty, with a
// line on o.progress, where the threads would not outnumber the usable cores, or a slowdown
// falls outside what a profile may hold (a measurement the machine's other load broke).
ProfileSharedCore shared_core_turns(const ModelSpec& model, const ProfileOptions& o, ProfileBackend& backend,
                                    ProfileWorkload& w, int micro_batch_size, int stage_blocks,
                                    std::int64_t stage_parameters);

}  // namespace pipesim
