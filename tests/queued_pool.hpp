#pragma once
// Shared hardware for engine tests: devices 0 .. devices - 1 in one pool of `cores` cores,
// an op waiting for a core of its own (ComputePool::queue).
#include "sim/resources.hpp"

namespace pipesim::testing_hardware {

inline SharedHardware queued_pool(int devices, double cores) {
  SharedHardware hw;
  ComputePool pool;
  for (int d = 0; d < devices; ++d) pool.devices.push_back(d);
  pool.cores = cores;
  pool.queue = true;
  hw.pools.push_back(pool);
  return hw;
}

}  // namespace pipesim::testing_hardware
