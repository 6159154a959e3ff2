#include "sim/resources.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace pipesim {

std::vector<ComputePool> consecutive_pools(int devices, int size, const ComputePool& each) {
  PIPESIM_ASSERT(size >= 1);
  std::vector<ComputePool> pools;
  for (int first = 0; first < devices; first += size) {
    ComputePool& pool = pools.emplace_back(each);
    pool.devices.clear();
    for (int d = first; d < std::min(devices, first + size); ++d) pool.devices.push_back(d);
  }
  return pools;
}

bool SharedHardware::shares_nothing() const {
  if (overlap_slowdown > 1 || !pools.empty()) return false;
  for (double s : device_slowdown)
    if (s != 1) return false;
  for (std::size_t d = 1; d < node_of_device.size(); ++d)
    if (node_of_device[d] != node_of_device[0]) return false;
  return true;
}

void SharedHardware::check(int devices) const {
  std::vector<int> pool_of(static_cast<std::size_t>(std::max(devices, 0)), -1);
  for (std::size_t p = 0; p < pools.size(); ++p) {
    const ComputePool& pool = pools[p];
    for (int d : pool.devices) {
      if (d < 0 || d >= devices)
        throw InputError("shared hardware: pool " + std::to_string(p) + " names device " + std::to_string(d) +
                         ", but the schedule has devices 0.." + std::to_string(devices - 1));
      if (pool_of[static_cast<std::size_t>(d)] >= 0)
        throw InputError("shared hardware: device " + std::to_string(d) + " is in pools " +
                         std::to_string(pool_of[static_cast<std::size_t>(d)]) + " and " + std::to_string(p));
      pool_of[static_cast<std::size_t>(d)] = static_cast<int>(p);
    }
    if (!(pool.cores >= 0) || !std::isfinite(pool.cores))
      throw InputError("shared hardware: pool " + std::to_string(p) + " has " + std::to_string(pool.cores) +
                       " cores; expected a finite number >= 0 (0: no processor sharing)");
    for (int k = 0; k < kNumOpKinds; ++k)
      for (double s : pool.slowdown[static_cast<std::size_t>(k)])
        if (!(s >= 0.1) || !std::isfinite(s))
          throw InputError("shared hardware: pool " + std::to_string(p) + "'s slowdown for " +
                           std::string(op_kind_name(static_cast<OpKind>(k))) + " holds " + std::to_string(s) +
                           "; expected a finite factor >= 0.1");
    for (int k = 0; k < kNumOpKinds; ++k)
      if (const double s = pool.turn_slowdown[static_cast<std::size_t>(k)]; !(s >= 0.1) || !std::isfinite(s))
        throw InputError("shared hardware: pool " + std::to_string(p) + "'s turn slowdown for " +
                         std::string(op_kind_name(static_cast<OpKind>(k))) + " is " + std::to_string(s) +
                         "; expected a finite factor >= 0.1");
  }
  if (!device_slowdown.empty() && device_slowdown.size() != static_cast<std::size_t>(devices))
    throw InputError("shared hardware: " + std::to_string(device_slowdown.size()) + " devices have a speed, the schedule has " +
                     std::to_string(devices));
  for (std::size_t d = 0; d < device_slowdown.size(); ++d)
    if (!(device_slowdown[d] >= 0.1) || !std::isfinite(device_slowdown[d]))
      throw InputError("shared hardware: device " + std::to_string(d) + "'s slowdown is " +
                       std::to_string(device_slowdown[d]) + "; expected a finite factor >= 0.1");
  if (!node_of_device.empty() && node_of_device.size() != static_cast<std::size_t>(devices))
    throw InputError("shared hardware: " + std::to_string(node_of_device.size()) + " devices have a node, the schedule has " +
                     std::to_string(devices));
  for (int n : node_of_device)
    if (n < 0) throw InputError("shared hardware: node " + std::to_string(n) + " is negative");
  if (nics_per_node < 1) throw InputError("shared hardware: nics per node " + std::to_string(nics_per_node) + " < 1");
  if (!(overlap_slowdown >= 1) || !std::isfinite(overlap_slowdown))
    throw InputError("shared hardware: overlap slowdown " + std::to_string(overlap_slowdown) + "; expected a finite factor >= 1");
}


}  // namespace pipesim
