#pragma once
// The assessment of one simulated run on a real machine: what a person wants to know of a
// schedule there besides its timeline: tokens/s, model FLOPs utilization, the memory of its
// fullest GPU against the capacity, and dollars per million tokens.
//
// It asks an AssessmentSource for the machine, the parallelism and the memory; the cost
// model the run was simulated with serves it (assess/analytical_source.hpp), so the same
// arithmetic assesses every model that knows its machine.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cost_models/memory_model.hpp"
#include "schedules/schedule.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"

namespace pipesim {

// The machine a run is priced on and how the model is spread over it.
struct Deployment {
  std::string model;     // the model's catalog name
  std::string hardware;  // the GPU's catalog name (never the file it came from)
  int nodes = 0, gpus_per_node = 0;
  int tp = 0, dp = 0;    // tensor parallelism inside a pipeline device; pipeline replicas
  int micro_batch_size = 0;  // sequences per micro-batch
  int seq_len = 0;
  double flops_per_sequence = 0;  // the model's forward + backward, no recomputation
  double peak_flops = 0;          // one GPU's dense peak in the run's dtype
  std::optional<double> price_per_hour;  // USD per GPU-hour
  std::string price_source;              // where it comes from ("--price-per-hour" when given)
  bool price_assumed = false;            // the catalog marks it as an assumption
  std::int64_t capacity = 0;             // one GPU's memory, bytes
};

// What an assessment asks of the cost model a run was simulated with.
class AssessmentSource {
 public:
  virtual ~AssessmentSource() = default;
  virtual Deployment deployment() const = 0;
  // What one GPU of `device` holds at its peak, given what the engine saw of it (its peak
  // activation bytes and weight versions). InputError if `device` is not the schedule's.
  virtual DeviceMemory device_memory(const Schedule& schedule, int device, const DeviceStats& stats) const = 0;
};

// One schedule on one model and machine.
struct Assessment {
  std::string model;     // Deployment::model
  std::string hardware;  // Deployment::hardware
  int nodes = 0, gpus_per_node = 0;
  int gpus = 0;          // nodes x gpus_per_node = tp x pp x dp
  int tp = 0, pp = 0, dp = 0;
  // Sequences per iteration, all data-parallel replicas (m x b x dp): the global batch of a
  // schedule that steps the optimizer once an iteration.
  double global_batch = 0;
  // Optimizer steps per iteration at each stage: 1, or m for a schedule that steps after every
  // micro-batch (AMP, PipeDream, async 1F1B), which trains at global_batch / optimizer_steps
  // sequences per step.
  int optimizer_steps = 1;
  double tokens_per_iteration = 0;
  double tokens_per_s = 0;
  double mfu = 0;                        // model FLOPs (no recomputation) / (time x GPUs x peak)
  std::optional<double> price_per_hour;  // USD per GPU-hour: the catalog's or --price-per-hour
  std::string price_source;
  bool price_assumed = false;
  std::optional<double> cost_per_million_tokens;  // USD, if the GPU has a price
  std::vector<DeviceMemory> memory;      // per pipeline device (one of its GPUs)
  std::int64_t peak_memory = 0;          // max over devices
  int peak_device = 0;                   // the first device holding it
  std::int64_t capacity = 0;
  bool fits = true;
  std::int64_t overshoot = 0;            // peak - capacity when it does not fit
};

// Sequences per iteration of `schedule` with `micro_batch_size` sequences per micro-batch on
// `dp` data-parallel replicas of it: the global batch where it steps once an iteration.
long long sequences_per_iteration(const Schedule& schedule, int micro_batch_size, int dp);

// Optimizer steps per iteration at a stage: the OptSteps of stage 0 of pipeline 0 over the
// run, per iteration, rounded up (every stage steps as often); 1 where the schedule has none.
int optimizer_steps_per_iteration(const Schedule& schedule);

Assessment assess(const AssessmentSource& source, const Schedule& schedule, const SimResult& result,
                  const Metrics& metrics);

// The bytes each device holds besides its activations (weights, gradients, optimizer state,
// workspace, buffers): what a Chrome trace's memory counters add to the engine's.
std::vector<std::int64_t> static_memory(const AssessmentSource& source, const Schedule& schedule,
                                        const SimResult& result);

// One configuration evaluated: simulated (on `simulator`, which keeps its buffers between
// runs, with `observer` if any, on `hardware`'s shared resources if any), summarized and assessed.
struct AssessedRun {
  SimResult result;
  Metrics metrics;
  Assessment assessment;
};
AssessedRun assess_configuration(Simulator& simulator, const Schedule& schedule, const CostModel& model,
                                 const AssessmentSource& source, SimObserver* observer = nullptr,
                                 const SharedHardware* hardware = nullptr);

// The configurations to advise on when none fits: up to `k` of the positions `among`, the
// smallest overshoot first, ties in the order of `among`. `overshoot(i)` is position i's.
template <typename Overshoot>
std::vector<std::size_t> closest_to_fitting(std::vector<std::size_t> among, Overshoot overshoot, std::size_t k) {
  std::stable_sort(among.begin(), among.end(), [&](std::size_t a, std::size_t b) { return overshoot(a) < overshoot(b); });
  if (among.size() > k) among.resize(k);
  return among;
}
// Of `assessed`: empty if any fits, else the `k` closest to fitting.
std::vector<std::size_t> closest_to_fitting(const std::vector<Assessment>& assessed, std::size_t k);

}  // namespace pipesim
