#include "cost_models/replayed.hpp"

#include <cmath>

#include "core/error.hpp"

namespace pipesim {
namespace {

struct Sum {
  double total = 0;
  int count = 0;
  void add(Tick t) {
    PIPESIM_ASSERT(t >= 0);
    total += static_cast<double>(t);
    ++count;
  }
  Tick mean() const { return static_cast<Tick>(std::llround(total / count)); }
};

}  // namespace

ReplayedCostModel::ReplayedCostModel(const CostModel& base, const std::vector<std::pair<Op, Tick>>& op_times,
                                     const std::vector<std::pair<std::pair<int, int>, Tick>>& hand_offs,
                                     const std::vector<std::pair<std::pair<int, std::int64_t>, Tick>>& collectives)
    : RetimedCostModel(base), base_(base) {
  std::unordered_map<Op, Sum, OpHash> ops;
  for (const auto& [op, t] : op_times) ops[op].add(t);
  for (const auto& [op, s] : ops) ops_[op] = s.mean();
  std::map<std::pair<int, int>, Sum> links;
  for (const auto& [link, t] : hand_offs) links[link].add(t);
  for (const auto& [link, s] : links) links_[link] = s.mean();
  std::map<std::pair<int, std::int64_t>, Sum> sums;
  for (const auto& [key, t] : collectives) sums[key].add(t);
  for (const auto& [key, s] : sums) collectives_[key] = s.mean();
}

Tick ReplayedCostModel::allreduce_time(int participants, std::int64_t bytes) const {
  const auto it = collectives_.find({participants, bytes});
  return it == collectives_.end() ? base_.allreduce_time(participants, bytes) : it->second;
}

Tick ReplayedCostModel::compute_time(const Op& op, OpScale scale) const {
  const auto it = ops_.find(op);
  return it == ops_.end() ? base_.compute_time(op, scale) : it->second;
}

TransferCost ReplayedCostModel::transfer(int src_device, int dst_device, std::int64_t bytes) const {
  const auto it = links_.find({src_device, dst_device});
  if (it == links_.end()) return base_.transfer(src_device, dst_device, bytes);
  return TransferCost{0, it->second};
}

}  // namespace pipesim
