#include "cost_models/replayed.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "core/error.hpp"
#include "core/percentile.hpp"

namespace pipesim {
namespace {

// The mean of each key's times, rounded to the tick, into `out` (a map keyed as `times`).
template <class Map, class Key>
void put_means(Map& out, const std::vector<std::pair<Key, Tick>>& times) {
  Map totals, counts;
  for (const auto& [key, t] : times) {
    PIPESIM_ASSERT(t >= 0);
    totals[key] += t;
    ++counts[key];
  }
  for (const auto& [key, total] : totals)
    out[key] = static_cast<Tick>(std::llround(static_cast<double>(total) / static_cast<double>(counts[key])));
}

// The lower median of each key's times (core/percentile.hpp) into `out`.
template <class Map, class Key>
void put_medians(Map& out, const std::vector<std::pair<Key, Tick>>& times) {
  std::map<Key, std::vector<Tick>> all;
  for (const auto& [key, t] : times) {
    PIPESIM_ASSERT(t >= 0);
    all[key].push_back(t);
  }
  for (auto& [key, ts] : all) out[key] = lower_median(std::move(ts));
}

}  // namespace

ReplayedCostModel::ReplayedCostModel(const CostModel& base, const std::vector<std::pair<Op, Tick>>& op_times,
                                     const std::vector<std::pair<std::pair<int, int>, Tick>>& hand_offs,
                                     const std::vector<std::pair<std::pair<int, std::int64_t>, Tick>>& collectives,
                                     const std::vector<std::pair<Op, Tick>>& copies_in)
    : RetimedCostModel(base) {
  put_means(ops_, op_times);
  put_medians(links_, hand_offs);
  put_means(collectives_, collectives);
  put_means(copies_in_, copies_in);
}

Tick ReplayedCostModel::allreduce_time(int participants, std::int64_t bytes) const {
  const auto it = collectives_.find({participants, bytes});
  return it == collectives_.end() ? base().allreduce_time(participants, bytes) : it->second;
}

Tick ReplayedCostModel::grad_sync_work(const Op& grad_sync, OpScale scale) const {
  const auto it = ops_.find(grad_sync);
  return it == ops_.end() ? base().grad_sync_work(grad_sync, scale) : it->second;
}

Tick ReplayedCostModel::grad_sync_work_after(const Op& grad_sync, OpScale scale) const {
  if (collective_style() != CollectiveStyle::MemberThreads) return 0;
  const auto it = copies_in_.find(grad_sync);
  return std::min(grad_sync_work(grad_sync, scale),
                  it == copies_in_.end() ? base().grad_sync_work_after(grad_sync, scale) : it->second);
}

Tick ReplayedCostModel::compute_time(const Op& op, OpScale scale) const {
  const auto it = ops_.find(op);
  return it == ops_.end() ? base().compute_time(op, scale) : it->second;
}

TransferCost ReplayedCostModel::transfer(int src_device, int dst_device, std::int64_t bytes) const {
  const auto it = links_.find({src_device, dst_device});
  if (it == links_.end()) return base().transfer(src_device, dst_device, bytes);
  TransferCost cost = base().transfer(src_device, dst_device, bytes);  // what the sender does, as predicted
  cost.occupancy = 0;
  cost.latency = it->second;
  return cost;
}

}  // namespace pipesim
