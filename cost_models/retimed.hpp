#pragma once
// RetimedCostModel: another model's times, the base model's bytes. A model that answers
// only the time questions (compute, transfer, allreduce) derives from it and gets the byte
// questions (activations, messages, gradients: exact counts, which no draw or replay
// changes) answered by `base`: SampledCostModel (cost_models/sampled.hpp), ReplayedCostModel
// (cost_models/replayed.hpp).
#include <cstdint>

#include "cost_models/cost_model.hpp"

namespace pipesim {

class RetimedCostModel : public CostModel {
 public:
  // Refers to `base`, which must outlive it.
  explicit RetimedCostModel(const CostModel& base) : bytes_(base) {}

  ActivationCost activation(const Op& op, OpScale scale) const final { return bytes_.activation(op, scale); }
  std::int64_t message_bytes(const Op& producer, OpScale scale) const final {
    return bytes_.message_bytes(producer, scale);
  }
  std::int64_t grad_bytes(const Op& grad_sync, OpScale scale) const final { return bytes_.grad_bytes(grad_sync, scale); }
  // The executor's work between ops as the base model has it: neither a draw nor a replay
  // retimes it.
  Tick between_ops() const override { return bytes_.between_ops(); }
  // Where the collective runs is the base model's too.
  CollectiveStyle collective_style() const final { return bytes_.collective_style(); }

 protected:
  const CostModel& base() const { return bytes_; }

 private:
  const CostModel& bytes_;
};

}  // namespace pipesim
