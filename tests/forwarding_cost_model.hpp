#pragma once
// A cost model for the engine's tests that answers every question as `base` does, so that a
// test's model overrides only the answers it changes (an op's length, a GradSync member's
// work) and forwards the rest. same_for_every_microbatch() is the default, false: a test
// model that varies by micro-batch is asked about every op.
#include <cstdint>

#include "cost_models/cost_model.hpp"

namespace pipesim::testing_costs {

class ForwardingCostModel : public CostModel {
 public:
  // Refers to `base`, which must outlive it.
  explicit ForwardingCostModel(const CostModel& base) : base_(base) {}

  Tick compute_time(const Op& op, OpScale s) const override { return base_.compute_time(op, s); }
  ActivationCost activation(const Op& op, OpScale s) const override { return base_.activation(op, s); }
  std::int64_t message_bytes(const Op& op, OpScale s) const override { return base_.message_bytes(op, s); }
  TransferCost transfer(int src, int dst, std::int64_t bytes) const override { return base_.transfer(src, dst, bytes); }
  std::int64_t grad_bytes(const Op& op, OpScale s) const override { return base_.grad_bytes(op, s); }
  Tick allreduce_time(int participants, std::int64_t bytes) const override {
    return base_.allreduce_time(participants, bytes);
  }
  Tick grad_sync_work(const Op& op, OpScale s) const override { return base_.grad_sync_work(op, s); }
  Tick between_ops() const override { return base_.between_ops(); }

 protected:
  const CostModel& base() const { return base_; }

 private:
  const CostModel& base_;
};

}  // namespace pipesim::testing_costs
