#pragma once
// How fast each core runs the model's block passes now: the cores of one machine need not
// be equal. On a VM one vCPU may share its physical core with the host's own work (on the
// 2-vCPU KVM guest of docs/validation/cpu-history.md, core 0 ran gpt-small's block passes 22 % slower
// than core 1 for tens of minutes, three alternations in a row), and a hybrid CPU has fast and
// slow cores by design. `pipesim validate` pins each device thread to a core and predicts it
// at that core's speed (executor/shared_layout.hpp, sim/resources.hpp's device_slowdown).
#include <vector>

#include "cost_models/model_spec.hpp"

namespace pipesim {

// The median time of one block's passes (F + I + W) of `model` at micro-batch size `b`,
// within stages of `stage_blocks` blocks as the profile times them
// (ProfileWorkload::stage_passes), on each of `cores` (CPU ids): one thread visits the cores
// in turns for `rounds` rounds (after two untimed stage passes on each), so that a drift of
// the machine's speed meets every core alike, and on each visit runs stage passes for
// `dwell_s` seconds, the first untimed unless it alone lasts that long (the caches after a
// move: the profile times warm passes; gpt-tiny's pass timed right after a move took x1.1-1.6
// the profile's). InputError when a thread cannot be pinned to a core.
// Also each visit's median on its own: how much the core's speed moved from visit to visit,
// which is how well the one median per core is known (validate's prediction intervals).
struct CorePassSeconds {
  std::vector<double> median;               // per core: over all its timed passes
  std::vector<std::vector<double>> visits;  // per core: each visit's median, `rounds` of them
};
CorePassSeconds block_pass_seconds_on_cores(const ModelSpec& model, int b, const std::vector<int>& cores, int rounds,
                                            double dwell_s, int stage_blocks);

}  // namespace pipesim
