#pragma once
// UniformCostModel: the same forward / backward / weight-gradient time on every stage
// (per-stage overrides allowed), one activation size, identical links. Costs are by the
// device (cost_models/cost_model.hpp): the times given are one device's share of the model.
//
//   F = fwd / k     B = bwd / k (full backward)     I = (bwd - wgrad) / k     W = wgrad / k
//   with k = chunks_per_device x microbatch_split; activation memory / k; messages /
//   microbatch_split; gradient bytes / chunks_per_device
//   link transfer of n bytes: occupancy n / bandwidth, latency `link_latency`
//   allreduce (ring) over r devices: 2(r-1)/r * bytes / bandwidth + 2(r-1) * latency
//
// Without link settings links cost nothing, so the engine reproduces the dependency-only
// closed forms exactly.
#include <map>

#include "cost_models/cost_model.hpp"

namespace pipesim {

struct StageCosts {
  Tick fwd = kNsPerMs;
  Tick bwd = 2 * kNsPerMs;  // full backward (input + weight gradient)
  Tick wgrad = 0;           // the weight-gradient part of bwd; 0 = I takes all of bwd
};

struct UniformCostConfig {
  StageCosts stage;                     // default for every stage
  std::map<int, StageCosts> overrides;  // stage index -> costs
  Tick optimizer = 0;                   // OptStep time for one full stage
  std::int64_t activation_bytes = 0;    // activation memory of one micro-batch on one stage
  double input_grad_free_fraction = 0.5;  // share of it a split I frees (W frees the rest)
  std::int64_t message_bytes = 0;       // p2p message per micro-batch per boundary
  std::int64_t grad_bytes = 0;          // gradient bytes of one full stage
  Tick link_latency = 0;
  double link_bandwidth = 0;            // bytes/s; 0 = infinite (no occupancy)
};

class UniformCostModel final : public CostModel {
 public:
  explicit UniformCostModel(UniformCostConfig config);  // InputError if inconsistent

  Tick compute_time(const Op& op, OpScale scale) const override;
  ActivationCost activation(const Op& op, OpScale scale) const override;
  std::int64_t message_bytes(const Op& producer, OpScale scale) const override;
  TransferCost transfer(int src_device, int dst_device, std::int64_t bytes) const override;
  std::int64_t grad_bytes(const Op& grad_sync, OpScale scale) const override;
  Tick allreduce_time(int participants, std::int64_t bytes) const override;
  bool same_for_every_microbatch() const override { return true; }

  const UniformCostConfig& config() const { return config_; }

 private:
  const StageCosts& costs_of(int stage) const;
  Tick occupancy(std::int64_t bytes) const;
  UniformCostConfig config_;
};

}  // namespace pipesim
