#include "schedules/schedule.hpp"

#include <set>

#include "core/error.hpp"

namespace pipesim {

std::string_view weight_policy_name(WeightPolicy policy) {
  switch (policy) {
    case WeightPolicy::Current: return "current";
    case WeightPolicy::Stash: return "stash";
    case WeightPolicy::TwoBW: return "2bw";
  }
  return "?";
}

int Schedule::chunks_per_device() const {
  PIPESIM_ASSERT(!placement.empty());
  std::set<int> devices(placement[0].begin(), placement[0].end());
  PIPESIM_ASSERT(!devices.empty() && num_stages % static_cast<int>(devices.size()) == 0);
  return num_stages / static_cast<int>(devices.size());
}

int Schedule::chunk_of(const Op& op) const {
  const auto& stages = placement[op.pipeline];
  const int dev = stages[op.stage];
  int chunk = 0;
  for (int s = 0; s < op.stage; ++s)
    if (stages[s] == dev) ++chunk;
  return chunk;
}

std::vector<std::pair<int, int>> Schedule::replicas_on(int device) const {
  std::vector<std::pair<int, int>> out;
  for (int c = 0; c < static_cast<int>(placement.size()); ++c)
    for (int s = 0; s < static_cast<int>(placement[c].size()); ++s)
      if (placement[c][s] == device) out.emplace_back(c, s);
  return out;
}

std::size_t Schedule::total_ops() const {
  std::size_t n = 0;
  for (const auto& list : ops) n += list.size();
  return n;
}

std::vector<std::vector<int>> round_robin_placement(int num_stages, int num_devices) {
  std::vector<int> stages(static_cast<std::size_t>(num_stages));
  for (int s = 0; s < num_stages; ++s) stages[static_cast<std::size_t>(s)] = s % num_devices;
  return {stages};
}

}  // namespace pipesim
