#pragma once
// ProfileBackend: what the profiler (kernels/profiler.hpp) needs from a device to time the
// ops of a model. The profiler owns the measurement loop (warm-up, repeats, medians,
// fits); a backend owns the kernels and the clock:
//
//   profiler ──workload(model, b)──> ProfileWorkload   block / embedding / head passes,
//            ──optimizer(count, stage)──> OptimizerProbe  each timed by the backend's clock
//            ──link(bytes)─────────> LinkProbe
//            ──gradient_copies(count)──> GradientCopyProbe   (where GradSync copies on the device)
//            ──neighbour(model, b, slot)──> ProfileWorkload   block passes looped beside the
//                                                              timed one (the interference curve)
//
// The CPU backend (kernels/cpu_profile_backend.hpp) times with std::chrono::steady_clock
// on the calling thread. A CUDA backend would run its kernels on a stream and time each
// piece with events recorded around it (cudaEventElapsedTime after a synchronize), and
// measure device-to-device (and peer) copies as its link.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cost_models/model_spec.hpp"
#include "cost_models/profile.hpp"
#include "kernels/optimizer.hpp"  // OptimizerKind

namespace pipesim {

struct PassTimes {
  double forward = 0, input_grad = 0, weight_grad = 0;  // seconds
};

struct WorkloadBytes {
  std::int64_t activation = 0;             // what the pass's cache holds after F
  std::int64_t held_after_input_grad = 0;  // ... and after I (what W still needs)
};

// One model's pieces at one micro-batch size, on fixed inputs. Each pass runs F, then I,
// then W of its piece (the embedding has no I: input_grad stays 0) and returns the seconds
// of each; the passes may be run any number of times, in any order.
class ProfileWorkload {
 public:
  virtual ~ProfileWorkload() = default;
  virtual PassTimes block_pass() = 0;
  // A stage of `blocks` blocks (>= 1) on one micro-batch, as the executor runs it: F through
  // the blocks in order, each on the one before's output, then I back through them in
  // reverse, then W in reverse; one PassTimes per block. Between a block's F and its I, the
  // other blocks' weights and activations pass through the caches: on the CPU, gpt-tiny's
  // block took 3-7 % longer in a stage of 4 than alone, which is how a pipeline runs it.
  // Default: `blocks` block_pass() calls (a backend whose blocks outgrow its caches anyway).
  virtual std::vector<PassTimes> stage_passes(int blocks) {
    std::vector<PassTimes> out;
    for (int i = 0; i < blocks; ++i) out.push_back(block_pass());
    return out;
  }
  virtual PassTimes embedding_pass() = 0;
  virtual PassTimes head_pass() = 0;
  // Bytes, exact, once each pass has run at least once.
  virtual WorkloadBytes block_bytes() const = 0;
  virtual WorkloadBytes embedding_bytes() const = 0;
  virtual WorkloadBytes head_bytes() const = 0;
  virtual std::int64_t message_bytes() const = 0;  // the activation a stage sends on
  virtual ProfileParameters parameters() const = 0;
  // A neighbour (ProfileBackend::neighbour) is told when the profiler pauses it between its
  // passes (true) and lets it go on (false); the real ones need nothing.
  virtual void paused(bool now_paused) { (void)now_paused; }
};

// One parameter group of `count` numbers with its gradients and optimizer state, stepped as
// one tensor of a stage's OptStep.
class OptimizerProbe {
 public:
  virtual ~OptimizerProbe() = default;
  virtual double step(OptimizerKind kind) = 0;  // seconds of one update
};

// What the sender of the last send() spent on it (a hand-off between threads: the CPU's):
// its copy of the message, and the call that woke the receiver (it slept, waiting for it),
// seconds; negative: not measured (a link whose sender only enqueues a copy).
struct SenderParts {
  double copy = -1, wake = -1;
};

// A message of a fixed size from one device (thread, GPU) to another.
class LinkProbe {
 public:
  virtual ~LinkProbe() = default;
  virtual double send() = 0;  // seconds from the start of the send until the data is usable at the receiver
  virtual SenderParts sender_parts() const { return {}; }
};

// A stage replica's gradient of `count` numbers, copied as a GradSync member of the backend's
// executor copies it on its own device: out to a freshly allocated buffer for the collective,
// and the sum back in before the OptStep; and one copy added into another, as the member that
// arrives last sums the copies.
class GradientCopyProbe {
 public:
  virtual ~GradientCopyProbe() = default;
  virtual double copy_out() = 0;  // seconds
  virtual double copy_in() = 0;
  virtual double sum() = 0;
};

class ProfileBackend {
 public:
  virtual ~ProfileBackend() = default;
  virtual std::string name() const = 0;       // "cpu", "cuda": the profile's backend field
  virtual std::string link_kind() const = 0;  // "thread-handoff", "device-to-device", "peer"
  // Fills the profile's machine and libraries, and settings.threads and settings.clock.
  virtual void describe(Profile& profile) const = 0;
  // InputError when the model is not one the backend's kernels implement.
  virtual std::unique_ptr<ProfileWorkload> workload(const ModelSpec& model, int micro_batch_size,
                                                    std::uint64_t seed) = 0;
  // A group of `count` parameters within a stage that steps `stage_count` in one OptStep (the
  // profile's stage of stage_blocks blocks): how much of the group the caches still hold when
  // its turn comes depends on the stage around it.
  virtual std::unique_ptr<OptimizerProbe> optimizer(std::int64_t count, std::int64_t stage_count,
                                                    std::uint64_t seed) = 0;
  virtual std::unique_ptr<LinkProbe> link(std::int64_t bytes) = 0;
  // Null (the default) where the executor's GradSync copies hold no device compute (a GPU's
  // run on its copy engines, beside the kernels): the profile then has no gradient_copies.
  virtual std::unique_ptr<GradientCopyProbe> gradient_copies(std::int64_t count, std::uint64_t seed) {
    (void)count;
    (void)seed;
    return nullptr;
  }

  // The interference curve's neighbours: how many devices may run beside the timed one on
  // this host without sharing its processor (cpu: cores - 1, since past the cores the
  // simulator's processor sharing takes over; cuda: the other SM groups, virtual devices - 1).
  virtual int max_neighbours() const = 0;
  // A workload for neighbour `slot` (1..max_neighbours()), whose block passes the profiler
  // loops on a thread of its own while it times workload()'s passes: on the CPU any thread,
  // on CUDA SM group `slot` of the partition (its own context and stream).
  virtual std::unique_ptr<ProfileWorkload> neighbour(const ModelSpec& model, int micro_batch_size,
                                                     std::uint64_t seed, int slot) = 0;
};

}  // namespace pipesim
