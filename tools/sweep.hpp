#pragma once
// `pipesim sweep`: every combination of a grid (tools/sweep_grid.hpp) simulated on the
// analytical cost model, in parallel, and the configurations worth looking at: the best by
// tokens/s among those that fit in memory, and the Pareto fronts of throughput against peak
// memory and against staleness. docs/sweep.md.
//
// Each configuration is what `pipesim compare --model ... --json` reports for the same
// settings (same config, same simulate / summarize / assess), minus the timeline: no
// observer is attached.
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cost_models/memory_model.hpp"
#include "core/units.hpp"
#include "sim/breakdown.hpp"
#include "tools/hardware_flags.hpp"
#include "tools/sharing_flags.hpp"
#include "tools/fit_advice.hpp"
#include "tools/sweep_grid.hpp"

namespace pipesim {

// The settings every combination shares.
struct SweepSettings {
  HardwareOptions hardware;  // model, dtype, links, ...; nodes and gpus_per_node from --gpus
  int iterations = 2;
  std::string max_memory;    // --max-memory: what the sweep may use [default: what is available]
  // Filters of the selections (the best table and the fronts); every row stays in the
  // CSV and JSON. -1: no bound.
  int max_mismatch = -1;
  int max_delay = -1;
  // What-if contention (tools/sharing_flags.hpp), applied to every configuration.
  SharingOptions sharing;
};

// One evaluated configuration.
struct SweepRow {
  std::size_t index = 0;  // the combination's number in grid order (tools/sweep_grid.hpp)
  GridPoint point;
  int tp = 0, pp = 0, dp = 0, microbatches = 0, micro_batch_size = 0, gpus = 0;
  // Sequences per iteration, m x micro-batch size x dp: the global batch of a schedule that
  // steps the optimizer once an iteration (Assessment::global_batch).
  long long global_batch = 0;
  int optimizer_steps = 1;  // per iteration at each stage (Assessment::optimizer_steps)
  Tick time_per_iteration = 0;
  // Where the time goes (sim/breakdown.hpp): each category's mean over the devices, in
  // seconds per iteration; they add up to the time per iteration.
  std::array<double, kNumTimeCategories> time_parts{};
  double tokens_per_iteration = 0, tokens_per_s = 0, mfu = 0, bubble_ratio = 0;
  std::int64_t peak_memory = 0, capacity = 0, overshoot = 0;
  bool fits = false;
  DeviceMemory peak_device;  // the fullest device's breakdown
  std::int32_t max_mismatch = 0, max_delay = 0;
  double mean_mismatch = 0, mismatched_fraction = 0, mean_delay = 0;
  std::optional<double> cost_per_million_tokens;  // USD, if the GPU has a price
  // The lowest-numbered configuration with exactly these results and the same hardware,
  // schedule and parallelism (it differs only in settings that had no effect, e.g. a
  // recompute mode); its own index when it is the first. Selections list only those.
  std::size_t same_as = 0;
  bool passes_filters = true;  // --synchronous-only, --max-mismatch, --max-delay
};

// Why a combination was not evaluated; the first that applies counts.
enum class SkipReason : std::uint8_t {
  GpusIndivisible,  // tp x pp does not divide --gpus
  GlobalBatch,      // the global batch is not a multiple of dp x micro-batch size
  ModelShape,       // tp does not divide the model's heads (or FFN width, KV heads), or more stages than layers
  Schedule,         // the generator rejects pp and m (e.g. interleaved: m a multiple of p)
  CostModel,        // the analytical model rejects it (e.g. tp and GPUs per node)
  Simulation,       // the engine or the memory model rejects it
  TooLarge,         // its schedule needs more memory than one thread of the sweep may use
};
inline constexpr int kNumSkipReasons = 7;
std::string_view skip_reason_text(SkipReason reason);

struct SkipCount {
  std::size_t count = 0;
  std::string example;  // the message of the lowest-numbered combination skipped for it
};

struct SweepResult {
  std::size_t combinations = 0;
  std::size_t threads = 0;  // threads used: --jobs, at most one per schedule to generate
  std::vector<SweepRow> rows;  // evaluated configurations, by index
  std::array<SkipCount, kNumSkipReasons> skipped;
  std::size_t skipped_total() const;
};

// Called on the calling thread about ten times a second while the sweep runs, and once at
// the end: combinations done so far, and all of them.
using SweepProgress = std::function<void(std::size_t done, std::size_t total)>;

// Evaluates the grid on `jobs` threads. The result does not depend on `jobs`: each
// combination is computed alone and stored at its index. InputError for settings that no
// combination could use (unknown model or GPU, bad --recompute, --gpus, --gpus-per-node),
// and for a grid whose results alone would not fit in memory. The memory left is shared by
// the threads: a combination whose schedule needs more than a thread's share is skipped
// (SkipReason::TooLarge).
SweepResult run_sweep(const SweepSettings& settings, const SweepGrid& grid, int jobs,
                      const SweepProgress& progress = {});

// nodes x gpus_per_node for --gpus: one node of `gpus` when it is at most a node, else
// whole nodes (InputError if --gpus is not a multiple of --gpus-per-node).
std::pair<int, int> sweep_cluster_shape(int gpus, int gpus_per_node);

// Sets SweepRow::same_as of every row (rows in index order).
void mark_equivalents(const SweepGrid& grid, std::vector<SweepRow>& rows);
// The rows a selection considers: those that fit, pass the filters and are the first of
// their equivalents (SweepRow::same_as), and, with `global_batch` > 0, run that batch.
std::vector<std::size_t> candidates(const std::vector<SweepRow>& rows, long long global_batch = 0);
// Positions in `rows`: the `k` fastest (tokens/s) of `among`, fastest first, ties by index.
std::vector<std::size_t> best_rows(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& among,
                                   std::size_t k);
// The Pareto fronts of `among`: no other row has at least the throughput and at most the peak
// memory (or, for staleness, at most both the max mismatch and the max delay), one of them
// strictly. Rows with equal values on every axis are all kept. Ordered by peak memory (or
// mismatch, then delay), then index.
std::vector<std::size_t> memory_front(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& among);
std::vector<std::size_t> staleness_front(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& among);

// When none of a batch fits: the `k` rows closest to fitting (smallest overshoot, ties by
// index) among those that pass the filters and are the first of their equivalents.
std::vector<std::size_t> closest_rows(const std::vector<SweepRow>& rows, long long global_batch, std::size_t k);
// What would make `row` fit (tools/fit_advice.hpp): its configuration re-evaluated with each
// switch, as `compare` would run it.
std::vector<FitChange> sweep_fit_changes(const SweepSettings& settings, const SweepGrid& grid, const SweepRow& row);

}  // namespace pipesim
