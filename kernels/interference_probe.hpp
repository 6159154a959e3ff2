#pragma once
// The profiler's interference curves (kernels/profiler.hpp, docs/profile-format.md): a
// workload's passes timed beside 1..K neighbours, each a thread of its own looping stage
// passes on the backend (ProfileBackend::neighbour), in turns with the same passes alone.
#include "cost_models/model_spec.hpp"
#include "cost_models/profile.hpp"
#include "kernels/profile_backend.hpp"
#include "kernels/profiler.hpp"

namespace pipesim {

// The curves of workload `w` (micro-batch size alone.size) with 1..neighbours neighbours
// busy; empty (with a line on o.progress) when a slowdown falls outside what a profile may
// hold (a measurement the machine's other load broke).
ProfileInterference interference_curves(const ModelSpec& model, const ProfileOptions& o, ProfileBackend& backend,
                                        ProfileWorkload& w, const MicroBatchProfile& alone, int neighbours,
                                        int stage_blocks);

}  // namespace pipesim
