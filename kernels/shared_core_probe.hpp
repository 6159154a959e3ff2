#pragma once
// The profiler's shared-core turns (kernels/profiler.hpp, docs/profile-format.md): how a
// device's ops slow down when its core alternates with another device's, as a CPU run with
// more device threads than cores does (AMDP's 4 devices on 2 cores): each op then follows
// another device's op, whose weights, gradients and activations went through the core's
// caches in between.
#include <cstdint>

#include "cost_models/model_spec.hpp"
#include "cost_models/profile.hpp"
#include "kernels/profile_backend.hpp"
#include "kernels/profiler.hpp"

namespace pipesim {

// Workload `w`'s stage passes (stage_blocks blocks at its micro-batch size) and an Adam step
// over the stage's `stage_parameters`, on a thread pinned to one core, timed in turns: right
// after the same work of another device (a workload and optimizer of its own, on a second
// thread pinned to the same core), and right after its own (alone). Empty, with a line
// on o.progress, where the threads cannot be pinned or a slowdown falls outside what a
// profile may hold (a measurement the machine's other load broke).
ProfileSharedCore shared_core_turns(const ModelSpec& model, const ProfileOptions& o, ProfileBackend& backend,
                                    ProfileWorkload& w, int micro_batch_size, int stage_blocks,
                                    std::int64_t stage_parameters);

}  // namespace pipesim
