#pragma once
// ReplayedCostModel: a run's own measured times in place of a model's, so that the simulator
// can be replayed on what really happened (validate's error split, tools/validate_replay.hpp).
// The difference between the prediction and the replay is the cost model's (the profile's op
// and link times against the run's own); what is left between the replay and the run is the
// simulator's (dependencies, core and link sharing, waiting) and the work the run did
// outside its ops.
//
//   compute op   the mean of the op's measured durations (a stage op, OptStep, repeats in
//                every iteration with the same Op); an op not measured: the base model's
//   transfer     the link's median measured hand-off (no occupancy: the hand-off is the whole
//                of it); a link without one: the base model's. The median, a message's
//                typical time: as the mean, one hand-off the host stalled for 2-10 ms among
//                a link's 20-30 lengthened every message of the replay by 0.1-0.4 ms
//                (docs/validation/README.md, "Which hand-offs")
//   GradSync     a member's own work: the mean of its measured copies (a GradSync's entries in
//   work         op_times); none measured: the base model's. The part after the sum
//                (CollectiveStyle MemberThreads, grad_sync_work_after): the mean of its
//                measured copies in (`copies_in`); none measured: the base model's
//   allreduce    the mean of the measured collectives over as many participants and as many
//                bytes; none such: the base model's
//   bytes        the base model's (RetimedCostModel)
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cost_models/retimed.hpp"

namespace pipesim {

class ReplayedCostModel final : public RetimedCostModel {
 public:
  // `base` must outlive the model. `op_times`: each measured op and its duration (a
  // GradSync's: its member's own copies);
  // `hand_offs`: each measured message's (source device, destination device, hand-off);
  // `collectives`: each measured collective's ((participants, bytes), duration);
  // `copies_in`: each GradSync member's measured copy in (its op, the time).
  ReplayedCostModel(const CostModel& base, const std::vector<std::pair<Op, Tick>>& op_times,
                    const std::vector<std::pair<std::pair<int, int>, Tick>>& hand_offs,
                    const std::vector<std::pair<std::pair<int, std::int64_t>, Tick>>& collectives = {},
                    const std::vector<std::pair<Op, Tick>>& copies_in = {});

  Tick compute_time(const Op& op, OpScale scale) const override;
  TransferCost transfer(int src_device, int dst_device, std::int64_t bytes) const override;
  Tick allreduce_time(int participants, std::int64_t bytes) const override;
  Tick grad_sync_work(const Op& grad_sync, OpScale scale) const override;
  Tick grad_sync_work_after(const Op& grad_sync, OpScale scale) const override;

 private:
  std::unordered_map<Op, Tick, OpHash> ops_;  // mean per op
  std::unordered_map<Op, Tick, OpHash> copies_in_;  // mean per GradSync
  std::map<std::pair<int, int>, Tick> links_;  // median per directed link
  std::map<std::pair<int, std::int64_t>, Tick> collectives_;  // mean per (participants, bytes)
};

}  // namespace pipesim
