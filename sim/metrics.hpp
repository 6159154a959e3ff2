#pragma once
// Metrics: the numbers people compare schedules by, derived from one SimResult.
//
// Two bubble conventions exist and are never mixed (spec §2):
//   bubble_ratio           idle / (devices x makespan)   (GPipe, Chimera, ZB papers)
//   bubble_ratio_megatron  idle / busy, i.e. idle/ideal  (Megatron-LM)
// A device's idle time is makespan - busy: it counts every moment the device computes
// nothing, including before its first op and after its last.
#include <cstdint>
#include <string>
#include <vector>

#include "schedules/schedule.hpp"
#include "sim/engine.hpp"

namespace pipesim {

struct DeviceMetrics {
  int device = 0;
  Tick busy = 0;
  Tick idle = 0;
  std::int32_t peak_activations = 0;
  std::int64_t peak_activation_bytes = 0;
  std::int32_t peak_weight_versions = 0;  // weight copies held at once: replicas + stashed versions
};

// Staleness as the engine measured it (sim/versions.hpp has the definitions).
struct Staleness {
  std::int32_t max_mismatch = 0;      // updates between a micro-batch's F and B at one stage
  double mean_mismatch = 0;           // over all micro-batch backwards
  double mismatched_fraction = 0;     // share of backwards whose version differs from their F's
  std::int32_t max_delay = 0;         // updates between a gradient's version and the update applying it
  double mean_delay = 0;
  std::vector<StageStaleness> per_stage;
};

struct Metrics {
  std::string schedule;
  int devices = 0;
  int stages = 0;
  int microbatches = 0;
  int iterations = 1;
  std::size_t ops = 0;
  Tick makespan = 0;
  Tick busy = 0;  // summed over devices
  Tick idle = 0;  // summed over devices
  double bubble_ratio = 0;
  double bubble_ratio_megatron = 0;
  // Steady state: (end of the last iteration - end of the first) / (iterations - 1), which
  // leaves out the first fill; with one iteration, the makespan.
  Tick time_per_iteration = 0;
  double throughput_mb_per_s = 0;  // full-size micro-batches per second in steady state
  int chunks_per_device = 1;       // Schedule::chunks_per_device(): interleaved v, ZB-V 2, plain 1
  Staleness staleness;
  std::vector<DeviceMetrics> per_device;
  std::vector<std::string> critical_path;  // op text with device, first to last
};

// The most weights one device holds at once, in units of a plain pipeline's device share (1/p
// of the model): its peak weight copies (replicas + stashed versions) over its chunks. 1 for
// 1F1B, interleaved and ZB-V (v chunks of 1/v each); 2 for Chimera's two full stages; 1 + the
// stashed versions for PipeDream. What the tables' "weights" column shows ("2x").
double weight_share(const Metrics& m);
std::string weight_share_text(const Metrics& m);  // "1x", "2x", "1.5x"

// `warmup`: the first iterations run but not counted in time_per_iteration (see
// iteration_window); the rest of the metrics cover the whole run.
Metrics summarize(const Schedule& schedule, const SimResult& result, int warmup = 0);

// The span time per iteration is measured over (one rule for Metrics and the time
// breakdown, sim/breakdown.hpp). With two or more iterations: per_iteration = (last end -
// first end) / (iterations - 1) over the iterations' ends (SimResult::iteration_end), and
// the window is the `counted` = iterations - 1 iterations that end at the last end:
// [last end - per_iteration x counted, last end] (it starts at the first end, or up to
// counted - 1 ns after it, where the division leaves a remainder). With one iteration:
// [0, makespan]. Always end - start == per_iteration x counted, exactly.
//
// With `warmup` = W >= 1 (validate's warm-up iterations: the first W iterations of the
// run, their optimizer steps included, are not counted), the window starts at the W-th
// smallest end instead of the first: counted = iterations - W, per_iteration = (last end -
// end W) / counted. W = 1 is the rule above; W = 0 and W = 1 differ only with one iteration.
// PIPESIM_ASSERT: W < the number of iteration ends.
struct IterationWindow {
  Tick start = 0;
  Tick end = 0;
  Tick per_iteration = 0;
  int counted = 1;
};
IterationWindow iteration_window(const SimResult& result, int warmup = 0);

}  // namespace pipesim
