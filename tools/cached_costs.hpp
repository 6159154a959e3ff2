#pragma once
// The analytical cost model (cost_models/analytical.hpp) for one configuration of a sweep,
// each answer asked once. Its per-op answers depend on an op's kind and stage and the
// schedule's scale, never on its micro-batch or pipeline (tests/cached_costs_test.cpp holds
// that for every op of every generator), so a run of thousands of ops asks it once per
// (kind, stage) and a transfer once per (source, destination, bytes). A sweep evaluates each
// configuration through one; `compare` asks the model itself, and gets the same answers.
// One thread's: not thread-safe.
#include <cstdint>
#include <optional>
#include <vector>

#include "cost_models/analytical.hpp"
#include "cost_models/cost_model.hpp"

namespace pipesim {

class CachedCosts final : public CostModel {
 public:
  explicit CachedCosts(const AnalyticalCostModel& model) : model_(model) {}

  Tick compute_time(const Op& op, OpScale scale) const override;
  ComputeParts compute_parts(const Op& op, OpScale scale) const override;
  ActivationCost activation(const Op& op, OpScale scale) const override;
  std::int64_t message_bytes(const Op& producer, OpScale scale) const override;
  TransferCost transfer(int src_device, int dst_device, std::int64_t bytes) const override;
  std::int64_t grad_bytes(const Op& grad_sync, OpScale scale) const override;
  Tick allreduce_time(int participants, std::int64_t bytes) const override;
  bool same_for_every_microbatch() const override { return true; }

 private:
  // Answers by (kind, stage), for the scale of the first question (another scale starts over).
  struct Answers {
    std::optional<Tick> time;
    std::optional<ComputeParts> parts;
    std::optional<ActivationCost> activation;
    std::optional<std::int64_t> message, grad;
  };
  // The answers of `op`, or null for a stage outside the scale's (asked directly then).
  Answers* answers(const Op& op, OpScale scale) const {
    if (!scale_ || scale_->num_stages != scale.num_stages || scale_->chunks_per_device != scale.chunks_per_device ||
        scale_->microbatch_split != scale.microbatch_split) [[unlikely]]
      start_over(scale);
    if (op.stage < 0 || op.stage >= scale.num_stages) [[unlikely]]
      return nullptr;
    return &answers_[static_cast<std::size_t>(op.kind) * static_cast<std::size_t>(scale.num_stages) +
                     static_cast<std::size_t>(op.stage)];
  }
  void start_over(OpScale scale) const;

  const AnalyticalCostModel& model_;
  mutable std::optional<OpScale> scale_;
  mutable std::vector<Answers> answers_;  // [kind x stages + stage]
  struct Sent {
    std::int64_t bytes = -1;  // -1: nothing sent yet
    TransferCost cost;
  };
  mutable std::vector<Sent> transfers_;  // [src x devices_ + dst]: the last bytes sent and their cost
  mutable std::size_t devices_ = 0;
};

}  // namespace pipesim
