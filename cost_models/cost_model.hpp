#pragma once
// CostModel: the engine's only source of durations and sizes. Pure: the same question
// always gets the same answer, and nothing here knows about time passing.
//
// Times are for one device's share of the model (one stage of a plain pipeline). A
// schedule that cuts that share into `chunks` chunks (interleaved v, ZB-V 2) gets
// 1/chunks of it per chunk op, so every schedule is compared on the same model.
#include <cstdint>

#include "cost_models/units.hpp"
#include "schedules/op.hpp"

namespace pipesim {

// A point-to-point transfer on a directed link: `occupancy` (bytes / bandwidth) holds the
// link, transfers queue FIFO behind each other; `latency` is pipelined and holds nothing.
struct TransferCost {
  Tick occupancy = 0;
  Tick latency = 0;
};

// Activation memory of one micro-batch on one stage: a forward allocates `bytes`; a full
// backward (B) frees all of it; a split backward frees `freed_by_input_grad` at I and the
// rest at W.
struct ActivationCost {
  std::int64_t bytes = 0;
  std::int64_t freed_by_input_grad = 0;
};

class CostModel {
 public:
  virtual ~CostModel() = default;

  // Duration of a compute op (F, B, I, W, OptStep).
  virtual Tick compute_time(const Op& op, int chunks) const = 0;
  virtual ActivationCost activation(const Op& op, int chunks) const = 0;
  // Bytes sent from `producer` (an F sends activations forward, B/I send gradients back).
  virtual std::int64_t message_bytes(const Op& producer, int chunks) const = 0;
  virtual TransferCost transfer(int src_device, int dst_device, std::int64_t bytes) const = 0;
  // Gradient bytes GradSync reduces for one stage replica.
  virtual std::int64_t grad_bytes(const Op& grad_sync, int chunks) const = 0;
  // An allreduce of `bytes` over `participants` devices (one of them: no cost).
  virtual Tick allreduce_time(int participants, std::int64_t bytes) const = 0;
};

}  // namespace pipesim
