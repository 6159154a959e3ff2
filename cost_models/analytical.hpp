#pragma once
// AnalyticalCostModel: seconds and bytes of a real transformer on real hardware, from
// counted work (cost_models/transformer.hpp) and a roofline. docs/cost-model.md has the
// formulas, constants and sources; docs/validation/analytical.md checks them against the
// published Megatron-LM runs.
//
//   kernel time      max(FLOPs / (peak x efficiency(shape)), bytes / (HBM x memory efficiency));
//                    efficiency(M, N, K) from cost_models/gemm_model.hpp, fused attention
//                    at Efficiency::attention
//   layer pass       sum of its kernels + its tensor-parallel collectives on the TP link
//                    (those TpOverlap hides under a GEMM count only what outlasts it)
//   stage op         layers x layer pass (+ embedding on stage 0, + LM head and cross
//                    entropy on the last), / microbatch_split; B = I + W (less what B hides
//                    under W); full recomputation reruns the forward in I (or B), selective
//                    the attention core
//   OptStep          the optimizer's HBM traffic over the stage's parameters + the data-
//                    parallel gradient reduction over dp (+ the tied-embedding allreduce
//                    between the first and last stage)
//
// Placement: the schedule's device d is pipeline device d and occupies GPUs
// [d·tp, (d+1)·tp) in node-major order (ClusterSpec: GPU g is on node g / gpus_per_node).
// Costs are by the cut (cost_models/cost_model.hpp): the whole model is cut into the
// schedule's num_stages stages (p·v for interleaved), and a chunk op costs its own chunk's layers.
#include <string>
#include <string_view>
#include <vector>

#include "cost_models/cost_model.hpp"
#include "cost_models/hardware_spec.hpp"
#include "cost_models/model_spec.hpp"
#include "cost_models/transformer.hpp"
#include "cost_models/stage_layout.hpp"  // header-only: the one rule for cutting a model into stages

namespace pipesim {

// Which tensor-parallel collectives run under a GEMM instead of after it.
enum class TpOverlap : std::uint8_t {
  None,      // every collective waits for its GEMM and the next waits for it (Megatron 2021)
  Backward,  // Megatron's default since 2022: the column-parallel layers' backward collectives
             // (input-gradient reduction under the weight-gradient GEMM, the sequence-parallel
             // re-gather under the input-gradient GEMM)
  All,       // --tp-comm-overlap (Transformer Engine userbuffers): every collective under its GEMM
};
std::string_view tp_overlap_name(TpOverlap o);  // "none", "backward", "all"
TpOverlap parse_tp_overlap(std::string_view text, std::string_view what);  // InputError naming `what`

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
  Efficiency efficiency;           // kernel efficiencies; make_analytical_config takes the GPU's
  StagePartition partition;        // how the model is cut (cost_models/stage_layout.hpp); empty: the rule
  Recompute recompute = Recompute::None;
  bool zero1 = false;               // shard fp32 master weights and Adam state over dp
  bool overlap_grad_reduce = false;  // DP allreduce overlaps the last micro-batch's backward
  bool scatter_gather = true;       // Megatron §4.1: each TP rank sends 1/t of a p2p message
  // Megatron-LM up to 2021 waited for every batched p2p exchange (batch_isend_irecv, wait,
  // cuda synchronize) before computing on: the sending op's stream is busy for the
  // message's time, and the link adds only its latency.
  bool blocking_p2p = false;
  int grad_reduce_bytes = 2;        // bytes per gradient in DP / GradSync reductions (4: fp32)
  TpOverlap tp_overlap = TpOverlap::Backward;
  // Weight-gradient GEMMs add into the main gradients themselves (Megatron's
  // --gradient-accumulation-fusion, since February 2022); false: a separate kernel per
  // weight and micro-batch (cost_models/transformer.hpp, Microbatch).
  bool gradient_accumulation_fusion = true;
  // The vocabulary is padded up to a multiple of vocab_multiple x tp (Megatron's
  // --make-vocab-size-divisible-by, 128): aligned GEMMs, and the embedding rows it allocates.
  int vocab_multiple = 128;
};

// Seconds of one micro-batch of one layer, for introspection, tests and docs.
struct LayerTimes {
  double forward = 0, input_grad = 0, weight_grad = 0;  // compute, without TP collectives
  double tp_forward = 0, tp_input_grad = 0;             // TP collectives of the pass, exposed
  // Collectives of I that a fused backward (B = I + W) hides under W's GEMMs (TpOverlap).
  double tp_hidden_in_backward = 0;
};

class AnalyticalCostModel final : public CostModel {
 public:
  explicit AnalyticalCostModel(AnalyticalConfig config);  // InputError if inconsistent

  Tick compute_time(const Op& op, OpScale scale) const override;
  // F, B, I: recomputation, exposed TP collectives and blocking p2p; OptStep: the
  // data-parallel reduction and the tied-embedding allreduce.
  ComputeParts compute_parts(const Op& op, OpScale scale) const override;
  ActivationCost activation(const Op& op, OpScale scale) const override;
  std::int64_t message_bytes(const Op& producer, OpScale scale) const override;
  TransferCost transfer(int src_device, int dst_device, std::int64_t bytes) const override;
  std::int64_t grad_bytes(const Op& grad_sync, OpScale scale) const override;
  Tick allreduce_time(int participants, std::int64_t bytes) const override;
  bool same_for_every_microbatch() const override { return true; }

  const AnalyticalConfig& config() const { return config_; }
  const LayerTimes& layer_times() const { return layer_; }
  // Layers of `stage` when the model is cut into `num_stages` stages (cost_models/stage_layout.hpp;
  // InputError if the partition does not fit them).
  int layers_of(int stage, int num_stages) const;
  // Seconds of one kernel on one GPU: the roofline of its compute and its HBM bytes.
  double kernel_seconds(const Kernel& k) const;
  // Parameters one GPU of `stage` holds (its layers' TP shard, embedding, head).
  std::int64_t stage_parameters(int stage, int num_stages) const;
  // Seconds of the data-parallel gradient reduction of one stage, before any overlap.
  double dp_reduce_seconds(int stage, int num_stages) const;
  // Seconds of a ring collective moving 2(n-1)/n x bytes over n ranks at `bandwidth`.
  double ring_allreduce_seconds(int ranks, double bytes, const LinkSpec& link, double bandwidth) const;
  int node_of_device(int device) const;

 private:
  double collective_seconds(const Collective& c) const;
  LayerTimes pass_times(PassWork (*work)(const ModelSpec&, const Microbatch&, Pass)) const;
  double roofline(const PassWork& work) const;
  // Seconds of one full micro-batch of `kind` on `stage` (F, B, I, W), and the parts of it
  // that are not the op's own kernels.
  struct StageSeconds {
    double total = 0, recompute = 0, tp_comm = 0, p2p = 0;
  };
  StageSeconds stage_parts(OpKind kind, int stage, int num_stages) const;
  double stage_seconds(OpKind kind, int stage, int num_stages) const;
  // Seconds of a stage's OptStep: the update itself, the data-parallel reduction left
  // exposed, the tied-embedding allreduce.
  struct OptimizerSeconds {
    double adam = 0, reduce = 0, tied = 0;
    double total() const { return adam + reduce + tied; }
  };
  OptimizerSeconds optimizer_parts(int stage, int num_stages) const;
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
  int gemm_element_bytes_ = 2;  // GEMM operands (fp8: 1), for the alignment of their rows
  Microbatch mb_;
  LayerTimes layer_;
  double layer_recompute_ = 0;  // extra seconds in I (or B) per layer for the recompute option
  LayerTimes embedding_, head_;
  std::int64_t layer_act_ = 0, layer_w_held_ = 0;
  std::int64_t emb_act_ = 0, head_act_ = 0, head_w_held_ = 0;
};

}  // namespace pipesim
