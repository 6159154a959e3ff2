#pragma once
// ProfiledCostModel: the engine's durations and sizes from a measured profile
// (cost_models/profile.hpp, written by `pipesim profile`), for the model the profile
// measured, at one micro-batch size. docs/cost-model.md ("The profiled cost model").
//
//   stage op      blocks(stage) x block time  (+ embedding on stage 0, + head on the last)
//                 blocks(stage) from cost_models/stage_layout.hpp with the schedule's
//                 num_stages, so an interleaved chunk op is a stage of a finer cut
//   F, I, W       the profiled pass; B = I + W; the embedding has no I
//   micro-batch   every quantity is a SizeFit over the profiled sizes (time_fit.hpp),
//                 evaluated at b / microbatch_split (Chimera's halves are half-size runs)
//   OptStep       blocks x per-block optimizer step (+ embedding, + head norm and head
//                 weight where the stage holds them) (+ the tied-embedding gradient sum)
//   memory        activation / held-after-I bytes measured from the kernels' caches
//   links         the fitted latency + bytes / bandwidth; allreduce: a ring over it
//   GradSync      the stage's fp32 parameters; a member's own work (grad_sync_work): the
//                 profile's gradient copies out and in, per parameter, x the stage's parameters
//                 (none without them: a GPU's or an older profile). With the copies' sum
//                 (version 7, the CPU) the collective runs as the CPU executor runs it
//                 (CollectiveStyle::MemberThreads): the copy out before a member joins, the
//                 sum on the last member's device, (participants - 1) sums of the stage's
//                 parameters, and the copy in after it (grad_sync_work_after)
//   interference  slowdown(kind): the block's measured curve (F, I, W; B the curve of I + W),
//                 slowdown[j] with j other devices of the host busy, for the engine's
//                 shared-hardware pools (sim/resources.hpp); empty without a curve
//
// Weights of the tied LM head: on one stage the head multiplies the embedding's own
// matrix; with several stages the last stage keeps a copy (Megatron), whose optimizer step
// it pays, and both copies' gradients are summed before the step (a 2-rank allreduce over
// the link, on stage 0's and the last stage's OptStep) unless `tied_embedding_sync` is off.
#include <array>
#include <string>
#include <vector>

#include "cost_models/cost_model.hpp"
#include "cost_models/profile.hpp"
#include "cost_models/time_fit.hpp"
#include "cost_models/stage_layout.hpp"  // header-only: the one rule for cutting a model into stages

namespace pipesim {

struct ProfiledCostConfig {
  Profile profile;
  std::string source = "profile";  // the file, for messages
  // The model simulated. It must have the profile's block shape (hidden, heads, ffn,
  // seq_len, vocab, tied embeddings); its layer count may differ (a block's time does not
  // depend on how many follow). Empty name: the profiled model itself.
  ModelSpec model;
  int micro_batch_size = 1;
  std::string optimizer = "adam";  // "adam" or "sgd": the step OptStep times
  FitPolicy fit = FitPolicy::Auto;
  bool tied_embedding_sync = true;
};

// The pieces a stage is made of and the quantities measured per micro-batch size.
enum class Piece { Block, Embedding, Head };
enum class Measure { Forward, InputGrad, WeightGrad, ActivationBytes, HeldBytes };

class ProfiledCostModel final : public CostModel {
 public:
  // InputError (naming config.source) when the model does not match the profile, the
  // micro-batch size is too far outside the profiled sizes, or the optimizer is unknown.
  explicit ProfiledCostModel(ProfiledCostConfig config);

  Tick compute_time(const Op& op, OpScale scale) const override;
  ActivationCost activation(const Op& op, OpScale scale) const override;
  std::int64_t message_bytes(const Op& producer, OpScale scale) const override;
  TransferCost transfer(int src_device, int dst_device, std::int64_t bytes) const override;
  std::int64_t grad_bytes(const Op& grad_sync, OpScale scale) const override;
  Tick allreduce_time(int participants, std::int64_t bytes) const override;
  Tick grad_sync_work(const Op& grad_sync, OpScale scale) const override;
  CollectiveStyle collective_style() const override;
  Tick grad_sync_work_after(const Op& grad_sync, OpScale scale) const override;
  Tick between_ops() const override;  // the profile's executor.op_gap (its mean); 0 without
  bool same_for_every_microbatch() const override { return true; }

  const ProfiledCostConfig& config() const { return config_; }
  const ModelSpec& model() const { return config_.model; }
  // The fit of one measured quantity (InputGrad of the embedding does not exist: assert).
  const SizeFit& fit(Piece piece, Measure m) const;
  const SizeFit& message_fit() const { return message_; }
  // Seconds of one full micro-batch of `kind` (F, B, I, W) on `stage` of `num_stages`, at
  // micro-batch size b (sequences; fractional for split micro-batches).
  double stage_seconds(OpKind kind, int stage, int num_stages, double b) const;
  double optimizer_seconds(int stage, int num_stages) const;
  // The configured optimizer's step (adam or sgd) of one parameter group's measurements.
  const TimingStats& optimizer_step(const OptimizerTimes& group) const { return group.*step_; }
  std::int64_t stage_parameters(int stage, int num_stages) const;
  // Whether the last stage of `num_stages` holds (and steps) an LM head matrix of its own:
  // untied, or a tied copy on another stage than the embedding's.
  bool head_holds_weight(int num_stages) const { return !config_.model.tied_embeddings || num_stages > 1; }
  // One line for tables and traces: "profiled: gpt-small on cpu (CPU name), 2026-11-30, b=2".
  std::string label() const;

  // The interference curve of `kind`: slowdown[j] = an op's time with j other devices of the
  // host busy over its time alone (slowdown[0] = 1), measured up to the profile's K
  // neighbours (past K the last value holds; on a CPU, K <= cores - 1, and sharing cores
  // beyond is processor sharing's, not the curve's). F, I and W are the block's curves (the
  // ops a stage spends its time on; the embedding's and head's are in the profile); B is
  // the curve of I + W (ratio of the sums of their medians). Empty for the other kinds, and
  // for every kind when the profile has no curve (version 1, --neighbours 0).
  const std::vector<double>& slowdown(OpKind kind) const { return slowdowns_[static_cast<std::size_t>(kind)]; }
  // All kinds at once, indexed by OpKind: a ComputePool's `slowdown` (sim/resources.hpp).
  const std::array<std::vector<double>, kNumOpKinds>& slowdowns() const { return slowdowns_; }
  // Per kind, an op's expected time in turns, device threads outnumbering the cores, over its
  // expected time alone (the profile's shared_core, the ratio of the times' means): F, I and W
  // the block's, B that of I + W (of the sums of their means), OptStep the optimizer step's;
  // 1 for the other kinds, and for every kind when the profile has no turns (versions 1 and
  // 2, CUDA, --shared-core off). A ComputePool's `turn_slowdown` (sim/resources.hpp), as
  // executor/shared_layout.hpp's profile_slowdowns applies them.
  const std::array<double, kNumOpKinds>& turn_slowdowns() const { return turns_; }
  // Per kind, how far the turns' times stand out of their noise, in standard errors: the
  // larger of (the ratio of their medians - 1) / its relative standard error
  // (relative_median_error of both sides, in quadrature), a test the rare long times cannot
  // sway, and (the ratio of their means - 1) / its (relative_mean_error), which sees a
  // slowdown of some of the times only (gpt-small's first block of a turn, whose weights the
  // other devices' turns evicted: medians x1.00, means x1.20); B's from the sums of I's and
  // W's and the larger of their errors; 0 where there are no turns.
  const std::array<double, kNumOpKinds>& turn_evidence() const { return turn_evidence_; }
  // The profiled host's hardware threads (machine.cores): a CPU pool's cores.
  int cores() const { return config_.profile.machine.cores; }

 private:
  double microbatch(int split) const;  // b / split
  // `profiled` seconds of the profile's gradient copies (a stage of gradient_copies.parameters),
  // for `parameters` parameters.
  double copies_seconds(double profiled, std::int64_t parameters) const;
  StageLayout layout_of(int stage, int num_stages) const;

  ProfiledCostConfig config_;
  SizeFit fits_[3][5];
  SizeFit message_;
  const TimingStats OptimizerTimes::*step_ = &OptimizerTimes::adam;
  double optimizer_block_ = 0, optimizer_embedding_ = 0, optimizer_head_norm_ = 0, optimizer_head_weight_ = 0;
  std::array<std::vector<double>, kNumOpKinds> slowdowns_{};
  std::array<double, kNumOpKinds> turns_{};
  std::array<double, kNumOpKinds> turn_evidence_{};
};

}  // namespace pipesim
