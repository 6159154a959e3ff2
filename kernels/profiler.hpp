#pragma once
// The profiler: times a model's pieces on a backend (kernels/profile_backend.hpp) and
// returns a Profile (cost_models/profile.hpp), which `pipesim profile` writes to a file and
// ProfiledCostModel turns into durations. A library function, so `pipesim validate` and
// tests can profile without the CLI.
//
//   for each micro-batch size b:  warm-up passes, then `repeats` timed passes (more, for
//                                 min_time_s, for short ops) of block (F I W, each block of
//                                 a stage of stage_blocks), embedding (F W), head (F I W)
//                                 -> medians
//   optimizer, per group:         block, embedding, head norm, head weight; SGD and Adam
//   link, per message size:       hand-offs around the model's message sizes -> latency +
//                                 bytes / bandwidth (Eigen least squares, cost_models/time_fit.hpp)
//   interference, at the middle   for k = 1..K: k neighbours (backend.neighbour) loop stage
//   size:                         passes on threads of their own while the same timed passes
//                                 run again -> slowdown[k] = median / median alone
//
// Cost: about (warmup + repeats) x (F + I + W of one block, the embedding and the head) per
// size, plus the link sizes, plus K more rounds at the middle size; gpt-tiny with 2
// repeats takes a few tens of milliseconds.
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cost_models/profile.hpp"
#include "kernels/profile_backend.hpp"

namespace pipesim {

struct ProfileOptions {
  std::vector<int> micro_batch_sizes = {1, 2, 4};
  int repeats = 10;  // timed runs per measurement, at least; the median is kept
  int warmup = 2;    // untimed runs first (caches, page faults, allocator)
  // ... and more timed runs until this many seconds have passed since the first (at most
  // kMaxTimedRepeats): a short op's median from a handful of runs moves by its tail (gpt-tiny's
  // block forward, 108 us with 20 % of runs at 128-185 us: 110-126 us between profiles of 5
  // repeats). 0: exactly `repeats`.
  double min_time_s = 0.025;
  // Blocks timed as one stage (ProfileWorkload::stage_passes): the caches a pipeline's block
  // runs with. 0: default_stage_blocks().
  int stage_blocks = 0;
  // Link message sizes; empty: model_link_sizes(), the sizes the simulation will send.
  std::vector<std::int64_t> link_sizes;
  std::uint64_t seed = 0x5eed;   // inputs and parameters (the numbers, not the times)
  std::ostream* progress = nullptr;  // a line per step (stderr from the CLI); null: quiet
  // Refuse sizes whose working set (caches, inputs, head probabilities) exceeds this.
  std::int64_t max_workload_bytes = std::int64_t{8} << 30;
  // Interference curve: 0..neighbours other devices busy. Unset: the backend's
  // max_neighbours() up to 3 (past the curve's end its last value holds); 0: no curve.
  // Negative or more than max_neighbours() is an InputError.
  std::optional<int> neighbours;
  // CPU: time the stage's passes and optimizer step with more device threads than cores,
  // taking turns on them (kernels/shared_core_probe.hpp), what such a run does.
  bool shared_core = true;
  // ... with this many device threads (more than the usable cores); 0: twice the usable cores.
  int shared_core_threads = 0;
};

// The neighbours a profile's curve gets by default: min(max_neighbours, 3).
int default_neighbours(int max_neighbours);

// The most timed runs a measurement gets to reach ProfileOptions::min_time_s (a measurement
// asked for more `repeats` gets those).
inline constexpr int kMaxTimedRepeats = 1000;

// Whether the optimizer's steps are each timed after a stage pass (F, I, W through a stage of
// stage_blocks blocks at the smallest micro-batch size), as a pipeline's stage computes
// between two of its steps: where those passes (one before each of the 2 optimizers' warm-up
// and repeats on each of the 4 groups) add at most kOptimizerPassBudget seconds to the
// profile. A stage whose pass is longer holds more than the caches anyway (gpt-small's 8
// blocks: 100 MB of optimizer state, 1.25 s a pass), and its steps are timed back to back.
inline constexpr double kOptimizerPassBudget = 2.0;
bool optimizer_between_passes(double stage_pass_s, const ProfileOptions& o);

// A stage's blocks as the profile times them by default: a stage of a `stages`-stage pipeline
// (the layers / stages, rounded up; `pipesim profile`: 2), as many as keep their weights
// and gradients within kStageGroupBytes, at least 1. Past that one block outgrows a core's
// caches already (the effect is a core's L2: 1 MiB on the VM of docs/validation/cpu-history.md;
// gpt-small's block alone holds 6.3 MB of weights and gradients).
inline constexpr std::int64_t kStageGroupBytes = std::int64_t{64} << 20;
int default_stage_blocks(const ModelSpec& model, int stages = 2);
// The options' stage_blocks, or the default; InputError when it is negative or more than
// the model's layers.
int profile_stage_blocks(const ModelSpec& model, const ProfileOptions& options);

// The largest message the link probes send (three buffers of it are allocated).
inline constexpr std::int64_t kMaxLinkProbeBytes = std::int64_t{64} << 20;

// Powers of two from a quarter of the smallest message (b·s·h·4 at the smallest size) to
// four times the largest transfer (the largest message, or the V·h·4 bytes of a tied
// embedding's gradient sum), at least 4 KiB and at most 64 MiB: a copy's bandwidth depends
// on which cache level it fits in, so the link is fitted where the simulated messages are.
std::vector<std::int64_t> model_link_sizes(const ModelSpec& model, const std::vector<int>& micro_batch_sizes);

// InputError when the options are out of range (no sizes, a size < 1 or repeated,
// repeats < 1, warmup < 0, min_time_s negative or not finite, fewer than two link sizes, a working set over the limit, more
// neighbours than the backend has) or the model is not one the backend implements.
Profile profile_model(const ModelSpec& model, const ProfileOptions& options, ProfileBackend& backend);
// profile_model's checks of `options`, before it measures anything: InputError for sizes out
// of range or listed twice, repeats < 1, warmup < 0, link sizes, a workload over the limit.
void check_profile_options(const ModelSpec& model, const ProfileOptions& options);
// The curve's K for these options on this backend; InputError when it asks for more than
// backend.max_neighbours() (naming why the backend has no more) or is negative.
int profile_neighbours(const ProfileOptions& options, const ProfileBackend& backend);

// Bytes a workload of micro-batch size b holds at its peak (a stage of `stage_blocks` blocks:
// their weights, gradients and caches; the head's cache, inputs, gradients), for the limit
// above.
std::int64_t profile_workload_bytes(const ModelSpec& model, int micro_batch_size, int stage_blocks);

// The current UTC time as ISO 8601, "2026-11-30T07:51:38Z".
std::string utc_now_iso8601();

}  // namespace pipesim
