#pragma once
// The executor: runs a Schedule for real, one thread per device, and measures it into the
// same records the simulator emits, so metrics, Chrome traces and reports work unchanged.
//
//   device 0 thread        device 1 thread        device 2 thread
//   0F0 0F1 0B0 ...        1F0 1B0 1F1 ...        ...
//     |  activation  ^        |
//     +--Channel(0,1)-|------>+          one bounded Channel per directed link (src, dst)
//        gradient     +--Channel(1,0)--+
//
// Each worker runs its device's op list in order. Before an op it takes its inputs: the
// previous stage's activation (F) or the next stage's input gradient (B, I) from the
// link's channel, keyed by the producing op (pipeline, stage, micro-batch); messages that
// arrive for later ops wait in the worker's mailbox. Inputs from the same device are
// handed over without a copy. Then it calls the device's ComputeBackend
// (executor/backend.hpp) with the weight version the schedule's policy gives
// (sim/versions.hpp rules, applied to real weights: Stash and 2BW keep real copies), and
// sends its output, copied, to the consumer's device.
//
// GradSync is a real reduction: each participant hands over a copy of its replica's
// gradient; the last to arrive sums them (and their contribution counts) and publishes the
// result; each participant's OptStep waits for it and applies the average. With
// blocking_grad_sync the GradSync itself waits (a barrier).
//
// Faults: an exception in any worker (kernel error, bad shape, missing version), or no op
// finishing for `timeout`, aborts every channel and collective, joins every thread, and
// throws ExecutionError "device D op I (OP): what", holding the partial measurement.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "executor/backend.hpp"
#include "core/error.hpp"
#include "schedules/schedule.hpp"
#include "sim/engine.hpp"
#include "sim/timeline.hpp"

namespace pipesim {

// Makes the backend of one device. The stop flag turns true when the run is torn down.
using BackendFactory =
    std::function<std::unique_ptr<ComputeBackend>(int device, const ModelSetup& setup, const StopFlag& stop)>;

struct RunOptions {
  int micro_batch_size = 1;
  std::uint64_t seed = 1;
  OptimizerConfig optimizer;
  // A run that finishes no op (and moves no message) for this long is stopped.
  std::chrono::nanoseconds timeout = std::chrono::seconds(60);
  // Messages a link's channel holds before its sender blocks; 0: as many as the link
  // carries in the whole run (sends never block, so the executor adds no deadlock).
  std::size_t channel_capacity = 0;
  // Refuse to start when the replicas' weights, gradients and Adam moments would take more
  // than this many bytes; 0: no check.
  std::int64_t max_memory_bytes = 0;
  BackendFactory backend;  // empty: CpuBackend
  bool keep_final_weights = false;  // fill MeasuredRun::final_weights
  // The text to train on (executor/text_corpus.hpp, `--data`); null: the synthetic sequences.
  std::shared_ptr<const TextCorpus> data;
  // Validation loss of pipeline 0's weights before the first optimizer step and after every
  // `validate_every` iterations' optimizer steps of each stage (PipeDream steps m times an
  // iteration, 1F1B once; MeasuredRun::validation); 0: none.
  int validate_every = 0;
  int validation_sequences = 16;  // of seq_len tokens each (executor/text_corpus.hpp)
  // Device d's thread runs on core pin_cores[d % size] only (CPU ids); empty: wherever the
  // system puts it. `validate` pins, so that each device runs at its core's measured speed.
  std::vector<int> pin_cores;
};

// The loss of one micro-batch (op), computed by its last stage's forward.
struct LossRecord {
  std::int32_t microbatch = 0;
  std::int32_t pipeline = 0;
  std::int32_t iteration = 0;
  double loss = 0;
  Tick time = 0;  // end of the forward that computed it
};

// The validation loss of the model after `iteration` iterations (executor/reference.hpp:
// every stage's weights of that version, put together, on the validation set).
struct ValidationPoint {
  std::int32_t iteration = 0;
  double loss = 0;
  Tick time = 0;  // when the last stage of pipeline 0 reached that version (0 for the start)
};

// A device thread's CPU time over its run (from its first op to its last: waits for messages
// and cores cost none) and within its compute ops (F, I, W, B and the optimizer step, each
// from its clock's start to its end), and in its GradSync copies (its gradient out, the sum
// back in: the simulator's GradSync work, on the device's core). The rest, total - ops -
// copies, is the thread's other work outside its ops: messages' copies and hand-offs, a
// GradSync's sum, weight versions kept, wake-ups, which the simulator puts on no core.
struct ThreadCpu {
  double total_s = 0;
  double ops_s = 0;
  double copies_s = 0;
};

// A GradSync member's own copies on its device thread (ns): its gradient out to the
// collective, and the sum back in at its OptStep.
struct SyncWork {
  OpRef member;
  Tick copy_out = 0, copy_in = 0;
};

struct MeasuredRun {
  Timeline timeline;  // the simulator's records, with measured times (ns since the start)
  SimResult result;   // makespan, per-device stats, iteration ends, critical path, staleness
  std::vector<LossRecord> losses;     // in order of micro-batch id
  std::vector<double> iteration_loss; // mean loss of each iteration's micro-batches
  std::vector<ValidationPoint> validation;  // with RunOptions::validate_every, by iteration
  // With RunOptions::keep_final_weights: every replica's weights after the run as one flat
  // vector, [pipeline][stage] (numerics checks).
  std::vector<std::vector<std::vector<float>>> final_weights;
  int hardware_threads = 0;           // std::thread::hardware_concurrency()
  std::vector<std::string> warnings;  // e.g. more devices than cores
  std::vector<BackendStats> backend_stats;  // per device: how its backend launched its ops
  std::vector<ThreadCpu> thread_cpu;        // per device
  // Each GradSync member's copies, for those that made both: the work CostModel::grad_sync_work
  // predicts.
  std::vector<SyncWork> sync_work;
  bool complete = false;
};

// Why a run stopped; what() is one line "device D op I (OP): reason".
class ExecutionError : public InputError {
 public:
  ExecutionError(const std::string& message, int device, int index, std::shared_ptr<const MeasuredRun> partial)
      : InputError(message), device_(device), index_(index), partial_(std::move(partial)) {}
  int device() const { return device_; }
  int index() const { return index_; }
  const MeasuredRun& partial() const { return *partial_; }

 private:
  int device_, index_;
  std::shared_ptr<const MeasuredRun> partial_;
};

// The checks run_schedule makes before it starts, for a caller that wants them before other
// work (the CLI: before profiling): InputError for a model the backend cannot compute,
// options out of range, more stages than layers, and a run whose weights and activations
// in flight exceed options.max_memory_bytes.
void check_run(const Schedule& schedule, const ModelSpec& model, const RunOptions& options);

// Sorts `losses` by (micro-batch, pipeline) and returns each iteration's mean loss (in that
// order, so a run and the reference trainer sum the same numbers the same way).
std::vector<double> iteration_means(std::vector<LossRecord>& losses);

// Runs `schedule` on `model`. InputError before starting for a schedule whose dependencies
// are broken, a model the backend cannot compute, or options out of range; ExecutionError
// if the run fails. Every thread has been joined when it returns or throws.
MeasuredRun run_schedule(const Schedule& schedule, const ModelSpec& model, const RunOptions& options = {});

}  // namespace pipesim
