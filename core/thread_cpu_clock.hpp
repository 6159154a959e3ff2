#pragma once
// The calling thread's CPU time (clock_gettime(CLOCK_THREAD_CPUTIME_ID)), in seconds: what a
// thread computed, without the time it waited or was off its core. The one clock of the
// profiler's --clock thread-cpu (kernels/cpu_profile_backend.cpp) and of the executor's
// per-thread CPU accounting (executor.hpp's ThreadCpu).
#include <time.h>

namespace pipesim {

inline double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace pipesim
