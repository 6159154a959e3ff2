#pragma once
// ComputeBackend: the seam between the executor (threads, channels, order, versions,
// measurement: executor/executor.hpp) and the numbers (kernels). One backend object per
// device; only that device's worker thread calls it, so a backend needs no locking.
//
//   executor (device thread d)                         ComputeBackend of device d
//   ------------------------------------------------   ------------------------------------
//   create_replica(pipeline 0, stage 2)          --->   weights, gradients, optimizer state
//   forward(op 2F5, version 3, input)            --->   F with weight version 3 -> activation
//   backward_input / backward_weight / backward  --->   I, W, B (caches kept per micro-batch)
//   keep_version(replica, 3) / drop_version      --->   a real copy of version 3 (Stash, 2BW)
//   optimizer_step(replica)                      --->   SGD / Adam on the accumulated gradient
//   export / add / import_gradients              --->   GradSync (the executor orders the sum)
//   copy_for_send(payload)                       --->   the "link": a copy another device owns
//
// The executor decides everything about order and versions (which version an op uses, when
// a version must be kept, when it may go); the backend holds the tensors and does the math.
// Payloads (activations, gradients) are opaque to the executor: a host matrix here, a
// device buffer in a CUDA backend.
//
// The CUDA backend (executor/cuda_backend.hpp) keeps device buffers in a CudaPayload, runs
// each call on the device's stream and waits for it before returning (the executor
// timestamps the calls); its copy_for_send returns once the copy is enqueued, with an event
// the receiver's stream waits for. stats() says how a backend launched its ops (empty for
// the CPU). RunOptions::backend_factory selects the implementation; nothing else changes.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cost_models/model_spec.hpp"
#include "kernels/launch_counts.hpp"
#include "kernels/optimizer.hpp"  // OptimizerKind
#include "cost_models/stage_layout.hpp"
#include "schedules/op.hpp"

namespace pipesim {

// An activation or an input gradient in flight between two ops.
class Payload {
 public:
  virtual ~Payload() = default;
  virtual std::int64_t bytes() const = 0;
};

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::Adam;
  double lr = 1e-3;
};

struct TextCorpus;  // executor/text_corpus.hpp

// What every replica of a run shares: the model and its data.
struct ModelSetup {
  ModelSpec model;
  int micro_batch_size = 1;     // sequences per full micro-batch
  int microbatch_split = 1;     // an op covers micro_batch_size / split sequences
  int num_stages = 1;           // stages per pipeline (the model is cut into these)
  std::uint64_t seed = 1;       // weights and synthetic data
  OptimizerConfig optimizer;
  int num_devices = 1;          // executor devices in the run (a GPU may hold several)
  std::shared_ptr<const TextCorpus> corpus;  // real text (executor/training_data.hpp); null: synthetic
};

// One (pipeline, stage) replica: which blocks it holds (cost_models/stage_layout.hpp).
struct ReplicaSpec {
  int pipeline = 0;
  int stage = 0;
  StageLayout layout;
};

// The micro-batch op being run and the weight version it must use.
struct OpArgs {
  Op op;
  std::int32_t version = 0;
};

// One replica's accumulated gradients as GradSync carries them: flat numbers in the
// exporting backend's own memory (host memory for CpuBackend, the GPU for CudaBackend).
class GradientBuffer {
 public:
  virtual ~GradientBuffer() = default;
  virtual std::int64_t size() const = 0;  // numbers
  std::int64_t contributions = 0;  // weight-gradient ops (B or W) accumulated since the last step
};

// How a backend ran its ops, for the run's JSON ("launch", docs/gpu.md). The CPU backend has
// nothing to say (path empty); the CUDA backend says whether the block ops were replayed
// CUDA graphs or direct launches, counts them, and sums the ops' GPU time between CUDA events.
struct BackendStats {
  std::string path;           // "graphs", "direct (graphs off)", "direct (fallback: <why>)"; "" none
  LaunchCounts launches;
  std::int64_t timed_ops = 0;  // F, I and W calls timed by CUDA events (B counts as I and W)
  std::int64_t device_ns = 0;  // their GPU time, start event to end event
};

class ComputeBackend {
 public:
  virtual ~ComputeBackend() = default;

  // Creates the weights of a replica (identical for every pipeline: replicas start equal).
  virtual void create_replica(const ReplicaSpec& spec) = 0;

  // F: `input` is the previous stage's activation (null on stage 0, which makes its own
  // token ids). Returns the activation for the next stage (null on the last stage, which
  // writes the micro-batch's loss to *loss instead).
  virtual std::unique_ptr<Payload> forward(const OpArgs& a, const Payload* input, double* loss) = 0;
  // I: `grad` is the next stage's input gradient (null on the last stage). Returns this
  // stage's input gradient (null on stage 0).
  virtual std::unique_ptr<Payload> backward_input(const OpArgs& a, const Payload* grad) = 0;
  // W: accumulates the weight gradients of the micro-batch and frees its cache.
  virtual void backward_weight(const OpArgs& a) = 0;
  // B = I then W.
  virtual std::unique_ptr<Payload> backward(const OpArgs& a, const Payload* grad) = 0;

  // Applies the accumulated gradient (averaged over its contributions) to the current
  // weights, zeroes it, and makes the current version one higher.
  virtual void optimizer_step(int pipeline, int stage) = 0;
  // GradSync, run by the executor (executor/worker.cpp): each replica exports a copy of its
  // gradient; the last to arrive sums the copies in member order with add_gradients (sum +=
  // other; both exported by backends of this kind, on any device); every replica imports
  // the sum as its gradient.
  virtual std::unique_ptr<GradientBuffer> export_gradients(int pipeline, int stage) = 0;
  virtual void add_gradients(GradientBuffer& sum, const GradientBuffer& other) = 0;
  virtual void import_gradients(int pipeline, int stage, const GradientBuffer& reduced) = 0;

  // Keep a real copy of the replica's current weights (its current version) for ops that
  // will use it after the next optimizer step; drop a kept copy.
  virtual void keep_version(int pipeline, int stage) = 0;
  virtual void drop_version(int pipeline, int stage, std::int32_t version) = 0;
  virtual int versions_held() const = 0;  // weight copies on this device: replicas + kept

  // A copy of `p` owned by the receiving device (the transfer).
  virtual std::unique_ptr<Payload> copy_for_send(const Payload& p) = 0;

  // Activation caches held on this device: bytes, and micro-batch-stage entries.
  virtual std::int64_t activation_bytes() const = 0;
  virtual int activations_held() const = 0;

  // The replica's current weights as one flat host vector (numerics checks; may be slow).
  virtual std::vector<float> flat_weights(int pipeline, int stage) const = 0;

  virtual BackendStats stats() const { return {}; }
};

// Set by the executor when the run is being torn down; a backend that can wait (a test
// hook, a device queue) should give up when it turns true.
using StopFlag = std::atomic<bool>;

}  // namespace pipesim
