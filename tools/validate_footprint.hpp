#pragma once
// A device's footprint: the blocks it holds, all its stages' (Chimera: one stage of each
// pipeline; interleaved: its chunks), what its caches hold between its ops. `validate` on
// the CPU profiles the block within a stage of that many blocks, once per footprint among
// its schedules (footprint_groups), and warns for a schedule whose devices hold another
// number than a --cost profile timed: a Chimera gpt-tiny device at p = 2 holds 8 blocks;
// timed within 4 (with 1F1B's), its F, B and OPT ran 5, 4 and 12 % longer than profiled,
// within 8, 3, 1 and 0 % (docs/validation/cpu-history.md, 2026-12-05).
#include <cstddef>
#include <string>
#include <vector>

#include "cost_models/model_spec.hpp"
#include "schedules/schedule.hpp"

namespace pipesim {

// The blocks the most loaded device of `s` holds, at most default_stage_blocks(model, 1)
// (the profiler's cap: 64 MiB of weights and gradients).
int device_blocks(const ModelSpec& model, const Schedule& s);

// The schedules' indices grouped by device_blocks, a group per footprint in the order its
// first schedule comes, each in the schedules' order.
std::vector<std::vector<std::size_t>> footprint_groups(const ModelSpec& model, const std::vector<Schedule>& schedules);

// The warning for `s` when its devices hold other than the `profiled` blocks the profile
// timed the block within; empty when they agree.
std::string footprint_warning(const ModelSpec& model, const Schedule& s, int profiled);

}  // namespace pipesim
