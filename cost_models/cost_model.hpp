#pragma once
// CostModel: the engine's only source of durations and sizes. Pure: the same question
// always gets the same answer, and nothing here knows about time passing.
//
// Every answer is for one op: one stage of the schedule's cut of the model (stage op.stage of
// OpScale::num_stages; p·v stages for interleaved) and 1/microbatch_split of a micro-batch
// (Chimera's backward halving). A model reads that cut in one of two ways, and says which:
//   by the cut     (analytical, profiled) the whole model is cut into num_stages stages and
//                  an op costs its own stage's layers; chunks_per_device is not read
//   by the device  (uniform) the costs it is given are one device's share of the model, held
//                  as chunks_per_device chunks, so an op costs 1/chunks_per_device of them
// For a model cut evenly the two agree, so every schedule is compared on the same model.
#include <cstdint>

#include "core/units.hpp"
#include "schedules/op.hpp"
#include "schedules/schedule.hpp"

namespace pipesim {

// Where one op sits in the schedule's cut of the model, and how much of a micro-batch it covers.
struct OpScale {
  int chunks_per_device = 1;  // stages each device holds (v for interleaved, 2 for a V): read by the device
  int microbatch_split = 1;   // each op covers 1/microbatch_split of a micro-batch
  int num_stages = 1;         // stages per pipeline, the whole model's cut: read by the cut
};

inline OpScale scale_of(const Schedule& s) { return OpScale{s.chunks_per_device(), s.microbatch_split, s.num_stages}; }

// A point-to-point transfer on a directed link: `occupancy` (bytes / bandwidth) holds the
// link, transfers queue FIFO behind each other; `latency` is pipelined and holds nothing.
//
// A hand-off between host threads (the CPU executor's device threads) costs the sender too,
// and its latency is the receiver's wake-up (docs/shared-hardware.md, "Hand-offs between
// threads"): the sending device is busy `sender` after the message leaves (its copy), and
// `wake` more when the receiving device sleeps waiting for it (the wake-up call, through the
// hypervisor on a VM); with `latency_is_wake`, only a receiver that sleeps pays `latency`, a
// busy one finds the message waiting when it looks. All 0 / false: a link that costs its
// sender nothing (every model but the profiled one on a CPU profile of version 6 or later).
struct TransferCost {
  Tick occupancy = 0;
  Tick latency = 0;
  Tick sender = 0;
  Tick wake = 0;
  bool latency_is_wake = false;
  bool hand_off() const { return sender > 0 || wake > 0 || latency_is_wake; }
};

// Activation memory of one micro-batch on one stage: a forward allocates `bytes`; a full
// backward (B) frees all of it; a split backward frees `freed_by_input_grad` at I and the
// rest at W.
struct ActivationCost {
  std::int64_t bytes = 0;
  std::int64_t freed_by_input_grad = 0;
};

// What a compute op's duration holds besides the op's own work (sim/breakdown.hpp): parts of
// compute_time(op) in ticks, summing to at most it; the rest is the op's own work (forward,
// backward, weight gradient, optimizer update).
struct ComputeParts {
  Tick recompute = 0;  // rerunning the forward (or part of it) inside a backward
  Tick tp_comm = 0;    // tensor-parallel collectives not hidden under the op's kernels
  Tick p2p = 0;        // the op waiting for its own point-to-point exchange (blocking p2p)
  Tick grad_sync = 0;  // gradient reductions inside the op (an OptStep's data-parallel all-reduce)
  Tick total() const { return recompute + tp_comm + p2p + grad_sync; }
  friend bool operator==(const ComputeParts&, const ComputeParts&) = default;
};

class CostModel {
 public:
  virtual ~CostModel() = default;

  // Duration of a compute op (F, B, I, W, OptStep).
  virtual Tick compute_time(const Op& op, OpScale scale) const = 0;
  // How that duration divides (ComputeParts); by default all of it is the op's own work.
  virtual ComputeParts compute_parts(const Op& op, OpScale scale) const {
    (void)op;
    (void)scale;
    return {};
  }
  virtual ActivationCost activation(const Op& op, OpScale scale) const = 0;
  // Bytes sent from `producer` (an F sends activations forward, B/I send gradients back).
  virtual std::int64_t message_bytes(const Op& producer, OpScale scale) const = 0;
  virtual TransferCost transfer(int src_device, int dst_device, std::int64_t bytes) const = 0;
  // Gradient bytes GradSync reduces for one stage replica.
  virtual std::int64_t grad_bytes(const Op& grad_sync, OpScale scale) const = 0;
  // An allreduce of `bytes` over `participants` devices (one of them: no cost).
  virtual Tick allreduce_time(int participants, std::int64_t bytes) const = 0;
  // The work a GradSync member does on its own device's compute: copying its replica's
  // gradient out and the sum back in, all before it joins the collective (CollectiveStyle
  // Streams) or the copy in once the sum is made (MemberThreads, grad_sync_work_after). A CPU executor's
  // device thread does both between its ops (on a core it may share); 0 (the default): a
  // copy engine or the collective itself does them, and GradSync holds no compute.
  virtual Tick grad_sync_work(const Op& grad_sync, OpScale scale) const {
    (void)grad_sync;
    (void)scale;
    return 0;
  }

  // Where a GradSync's reduction runs. Streams (the default): on its members' communication
  // streams, beside their compute, for allreduce_time; each member does its grad_sync_work
  // before it joins. MemberThreads: as a CPU executor's device threads run it
  // (executor/worker.cpp): each member copies its gradient out (grad_sync_work less
  // grad_sync_work_after) and joins; the member that arrives last sums the copies on its own
  // device for allreduce_time; then each member copies the sum back in (grad_sync_work_after)
  // before its next op.
  enum class CollectiveStyle { Streams, MemberThreads };
  virtual CollectiveStyle collective_style() const { return CollectiveStyle::Streams; }
  // MemberThreads: the part of grad_sync_work a member does once the sum is made. 0 (the
  // default): all of it before it joins.
  virtual Tick grad_sync_work_after(const Op& grad_sync, OpScale scale) const {
    (void)grad_sync;
    (void)scale;
    return 0;
  }

  // The device's own work after each of its compute ops, before its next one: an executor's
  // work between two ops (the next op's input, weight versions, its records), which a CPU
  // executor's device thread does on its core. 0 (the default): none.
  virtual Tick between_ops() const { return 0; }

  // True when every answer about an op depends only on its kind, pipeline and stage and the
  // scale, never on its micro-batch: then a run may ask once per (kind, pipeline, stage) and
  // reuse the answers (the engine's ready pass, sim/ready_pass.cpp, does). False (the
  // default) for a model that varies by micro-batch, as a sampled one does.
  virtual bool same_for_every_microbatch() const { return false; }
};

}  // namespace pipesim
