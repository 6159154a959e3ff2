#pragma once
// SampledCostModel: one Monte-Carlo draw of a profiled cost model (cost_models/profiled.hpp),
// for prediction intervals (assess/prediction_interval.hpp, docs/cost-model.md "Prediction
// intervals").
//
//   compute op   the profiled duration x (the op's quantile-u time / its expected time, the
//                mean: TimingStats::expected), both
//                at the profiled micro-batch size nearest the op's: a stage op's blocks,
//                embedding and head (or optimizer steps) summed from their measured
//                distributions at the same u, so its parts vary together (comonotone: the
//                widest spread the measurements allow, never narrower than the truth)
//   transfers    bytes / bandwidth and latency x the quantile-u / mean ratio of the link
//                sample nearest in bytes; one u per directed link and draw (a pure model is
//                asked (src, dst, bytes), never which transfer), so a draw has slow and
//                fast links, each as fast for all its transfers
//   allreduce    likewise, one u per (participants, bytes) and draw (CollectiveStyle
//                MemberThreads: the quantile-u / mean ratio of the copies' sum instead)
//   GradSync     a member's work x (the quantile-u copies out and in / their expected
//   work         times), one u per (stage, pipeline) and draw: the same in every iteration;
//                the part after the sum (grad_sync_work_after) at the same factor
//   bytes        activations, messages and gradients as the profiled model: exact counts
//
// u is a pure function of (seed, draw, the op's kind, stage, micro-batch and pipeline): a
// splitmix64 hash, no random-number state, so the model stays pure (the same question, the
// same answer) and reruns are byte-identical. The device of an op is its stage and pipeline's
// (a CostModel is not told it). A stage op (OptStep) has the same Op in every iteration and
// so the same draw.
//
// Only a measured profile has distributions: the analytical and uniform cost models have
// none, and the CLI refuses --samples with them rather than invent a spread (tools/).
#include <cstdint>

#include "cost_models/cost_model.hpp"
#include "cost_models/profiled.hpp"
#include "cost_models/retimed.hpp"

namespace pipesim {

// The q-quantile (q clamped to [0, 1]) of a measurement's repeats: TimingStats::at_quantile,
// linear between the profile's kept quantiles (version 2: every repeat up to 51), or for a
// version-1 profile between (0, min), (0.1, p10), (0.5, median), (0.9, p90) and (1, max).
// The one place the sampler reads a distribution.
double timing_quantile(const TimingStats& t, double q);

// How much the profile's repeats spread: the median over the block's timed passes (forward,
// input gradient, weight gradient at every micro-batch size) of (p90 - p10) / median.
double repeat_spread(const Profile& p);

// splitmix64's finalizer: a bijective 64-bit mix.
std::uint64_t mix64(std::uint64_t x);
// A uniform number in [0, 1) from a 64-bit hash (its top 53 bits).
double unit_interval(std::uint64_t hash);

class SampledCostModel final : public RetimedCostModel {
 public:
  // Draw `draw` (0, 1, ...) of `seed`. Refers to `base`, which must outlive it.
  SampledCostModel(const ProfiledCostModel& base, std::uint64_t seed, std::uint64_t draw);

  Tick compute_time(const Op& op, OpScale scale) const override;
  TransferCost transfer(int src_device, int dst_device, std::int64_t bytes) const override;
  Tick allreduce_time(int participants, std::int64_t bytes) const override;
  Tick grad_sync_work(const Op& grad_sync, OpScale scale) const override;
  Tick grad_sync_work_after(const Op& grad_sync, OpScale scale) const override;

  // The factor draw `u` (0..1) scales compute op `op` by: quantile-u time / expected time.
  double compute_factor(const Op& op, OpScale scale, double u) const;

 private:
  double link_factor(std::int64_t bytes, std::uint64_t key) const;
  double sync_work_factor(const Op& grad_sync) const;  // one draw per (stage, pipeline)
  std::uint64_t key(std::uint64_t what) const;  // the hash of (seed, draw, what)

  const ProfiledCostModel& base_;
  std::uint64_t seed_ = 0, draw_ = 0;
};

}  // namespace pipesim
