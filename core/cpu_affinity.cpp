#include "core/cpu_affinity.hpp"

#include <algorithm>

#include <pthread.h>
#include <sched.h>

namespace pipesim {

std::vector<int> usable_core_ids() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> ids;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return ids;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) ids.push_back(c);
  return ids;
}

int usable_cores() {
  const std::vector<int> ids = usable_core_ids();
  if (!ids.empty()) return static_cast<int>(ids.size());
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

bool pin_to_core(std::thread::native_handle_type thread, int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  return pthread_setaffinity_np(thread, sizeof set, &set) == 0;
}

}  // namespace pipesim
