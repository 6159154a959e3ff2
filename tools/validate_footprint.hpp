#pragma once
// A device's footprint: the blocks it holds, all its stages' (Chimera: one stage of each
// pipeline; interleaved: its chunks), what its caches hold between its ops. `validate`
// profiles the block within a stage of that many blocks (the fewest of its schedules', one
// profile serving them all), and warns for a schedule whose devices hold another number:
// a Chimera gpt-tiny device at p = 2 holds 8 blocks; timed within 4 (with 1F1B's), its F, B
// and OPT ran 5, 4 and 12 % longer than profiled, within 8, 3, 1 and 0 %
// (docs/validation/cpu-history.md, 2026-12-05).
#include <string>

#include "cost_models/model_spec.hpp"
#include "schedules/schedule.hpp"

namespace pipesim {

// The blocks the most loaded device of `s` holds, at most default_stage_blocks(model, 1)
// (the profiler's cap: 64 MiB of weights and gradients).
int device_blocks(const ModelSpec& model, const Schedule& s);

// The warning for `s` when its devices hold other than the `profiled` blocks the profile
// timed the block within; empty when they agree.
std::string footprint_warning(const ModelSpec& model, const Schedule& s, int profiled);

}  // namespace pipesim
