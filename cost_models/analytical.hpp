#pragma once
// AnalyticalCostModel: seconds and bytes of a real transformer on real hardware, from
// counted work (cost_models/transformer.hpp) and a roofline. docs/cost-model.md has the
// formulas, constants and sources; docs/validation/analytical.md checks them against the
// published Megatron-LM runs.
//
//   kernel time      max(FLOPs / (peak x gemm_efficiency), bytes / (HBM x memory_efficiency))
//   layer pass       sum of its kernels + its tensor-parallel collectives on the TP link
//   stage op         layers x layer pass (+ embedding on stage 0, + LM head on the last),
//                    / microbatch_split; B = I + W; full recomputation reruns the forward in
//                    I (or B), selective the attention core
//   OptStep          Adam over the stage's parameters (memory-bound) + the data-parallel
//                    gradient allreduce over dp (+ the tied-embedding allreduce)
//
// Placement: the schedule's device d is pipeline device d and occupies GPUs
// [d·tp, (d+1)·tp) in node-major order (ClusterSpec: GPU g is on node g / gpus_per_node).
// The whole model is cut into the schedule's num_stages stages (p·v for interleaved), so a
// chunk op costs its own chunk's layers; OpScale::chunks is not used.
#include <string>
#include <vector>

#include "cost_models/cost_model.hpp"
#include "cost_models/hardware_spec.hpp"
#include "cost_models/model_spec.hpp"
#include "cost_models/transformer.hpp"

namespace pipesim {

// One set of constants for every model and every row of docs/validation/analytical.md.
// gemm and attention are the least-squares fit to Megatron-LM's published A100 runs (2021
// software; tests/megatron_validation_test.cpp re-derives them, leave-one-out error 2.2 %);
// memory and network are typical measured fractions (STREAM-like copies reach 85-90 % of
// HBM peak, NCCL allreduce ~77 % of NVLink3). Newer software (fused attention, newer
// cuBLAS) and other GPUs may warrant their own values: fit_compute_efficiency() fits them
// to measured iteration times (cost_models/efficiency_fit.hpp).
struct Efficiency {
  double gemm = 0.684;       // share of dense peak that large tensor-core GEMMs reach
  double attention = 0.268;  // ... that the batched attention products (QK^T, P·V) reach
  double memory = 0.85;   // share of HBM bandwidth that element-wise kernels reach
  double network = 0.80;  // share of link bandwidth that NCCL collectives and p2p reach
};

struct AnalyticalConfig {
  ModelSpec model;
  ClusterSpec cluster;
  int pipeline_devices = 1;        // p: the schedule's devices; each holds tp GPUs
  int tp = 1;                      // tensor parallelism inside a pipeline device
  bool sequence_parallel = false;  // Korthikanti et al. 2022: norms and dropouts sharded
  bool flash_attention = false;    // fused attention: no s x s scores in HBM (transformer.hpp)
  int dp = 1;                      // pipeline replicas outside the simulated schedule
  int micro_batch_size = 1;        // sequences per micro-batch (b)
  std::string dtype = "bf16";      // compute dtype: selects the GPU's peak and storage bytes
  Efficiency efficiency;
  std::vector<int> partition;      // layers per stage (num_stages entries); empty = balanced
  Recompute recompute = Recompute::None;
  bool zero1 = false;               // shard fp32 master weights and Adam state over dp
  bool overlap_grad_reduce = false;  // DP allreduce overlaps the last micro-batch's backward
  bool scatter_gather = true;       // Megatron §4.1: each TP rank sends 1/t of a p2p message
  // Megatron-LM up to 2021 waited for every batched p2p exchange (batch_isend_irecv, wait,
  // cuda synchronize) before computing on: the sending op's stream is busy for the
  // message's time, and the link adds only its latency.
  bool blocking_p2p = false;
  int grad_reduce_bytes = 2;        // bytes per gradient in DP / GradSync reductions (4: fp32)
};

// Seconds of one micro-batch of one layer, for introspection, tests and docs.
struct LayerTimes {
  double forward = 0, input_grad = 0, weight_grad = 0;  // compute, without TP collectives
  double tp_forward = 0, tp_input_grad = 0;             // TP collectives of the pass
};

class AnalyticalCostModel final : public CostModel {
 public:
  explicit AnalyticalCostModel(AnalyticalConfig config);  // InputError if inconsistent

  Tick compute_time(const Op& op, OpScale scale) const override;
  ActivationCost activation(const Op& op, OpScale scale) const override;
  std::int64_t message_bytes(const Op& producer, OpScale scale) const override;
  TransferCost transfer(int src_device, int dst_device, std::int64_t bytes) const override;
  std::int64_t grad_bytes(const Op& grad_sync, OpScale scale) const override;
  Tick allreduce_time(int participants, std::int64_t bytes) const override;

  const AnalyticalConfig& config() const { return config_; }
  const LayerTimes& layer_times() const { return layer_; }
  // Layers of `stage` when the model is cut into `num_stages` stages (InputError if the
  // custom partition has another length).
  int layers_of(int stage, int num_stages) const;
  // Parameters one GPU of `stage` holds (its layers' TP shard, embedding, head).
  std::int64_t stage_parameters(int stage, int num_stages) const;
  // Seconds of the data-parallel gradient reduction of one stage, before any overlap.
  double dp_reduce_seconds(int stage, int num_stages) const;
  // Seconds of a ring collective moving 2(n-1)/n x bytes over n ranks at `bandwidth`.
  double ring_allreduce_seconds(int ranks, double bytes, const LinkSpec& link, double bandwidth) const;
  int node_of_device(int device) const;

 private:
  double roofline(const PassWork& work) const;
  double tp_collective_seconds(int collectives) const;
  // Seconds of one full micro-batch of `kind` on `stage` (F, B, I, W).
  double stage_seconds(OpKind kind, int stage, int num_stages) const;
  double optimizer_seconds(int stage, int num_stages) const;
  // Seconds a p2p message of one full micro-batch holds its link (+ the receiver's
  // all-gather under scatter/gather), between devices on different nodes or one node.
  double p2p_seconds(bool same_node) const;
  double p2p_gather_seconds(double bytes) const;
  // The slowest link class a pipeline spans: inter-node once p·tp GPUs exceed a node.
  const LinkSpec& pipeline_link() const;

  AnalyticalConfig config_;
  double peak_ = 0;          // FLOP/s of config.dtype
  int element_bytes_ = 2;
  Microbatch mb_;
  LayerTimes layer_;
  double layer_recompute_ = 0;  // extra seconds in I (or B) per layer for the recompute option
  LayerTimes embedding_, head_;
  std::int64_t layer_act_ = 0, layer_w_held_ = 0;
  std::int64_t emb_act_ = 0, head_act_ = 0, head_w_held_ = 0;
  std::vector<int> prefix_;  // custom partition: first layer of each stage
};

}  // namespace pipesim
