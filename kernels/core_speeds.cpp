#include "kernels/core_speeds.hpp"

#include <algorithm>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include <pthread.h>

#include "core/cpu_affinity.hpp"
#include "core/error.hpp"
#include "core/percentile.hpp"
#include "kernels/cpu_profile_backend.hpp"

namespace pipesim {
namespace {

// Moves the calling thread to `core`.
void move_to(int core) {
  if (!pin_to_core(pthread_self(), core))
    throw InputError("core speeds: cannot run a thread on core " + std::to_string(core));
  std::this_thread::yield();
}

double pass_seconds(ProfileWorkload& w) {
  const PassTimes pass = w.block_pass();
  return pass.forward + pass.input_grad + pass.weight_grad;
}

}  // namespace

std::vector<double> block_pass_seconds_on_cores(const ModelSpec& model, int b, const std::vector<int>& cores,
                                                int rounds) {
  PIPESIM_ASSERT(rounds >= 1);
  std::vector<std::vector<double>> times(cores.size());
  std::exception_ptr error;
  // One thread, moved from core to core: one allocator arena, warm after the first passes
  // (a thread per pass paid for fresh pages every time: 2x the pass).
  std::thread worker([&] {
    try {
      CpuProfileBackend backend(CpuClock::Wall);
      const std::unique_ptr<ProfileWorkload> w = backend.workload(model, b, 1);
      for (int core : cores) {  // untimed: the caches, the allocator
        move_to(core);
        (void)pass_seconds(*w);
        (void)pass_seconds(*w);
      }
      for (int r = 0; r < rounds; ++r)
        for (std::size_t c = 0; c < cores.size(); ++c) {
          move_to(cores[c]);
          times[c].push_back(pass_seconds(*w));
        }
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
  std::vector<double> medians;
  for (auto& t : times) {
    std::sort(t.begin(), t.end());
    medians.push_back(percentile(t, 0.5));
  }
  return medians;
}

}  // namespace pipesim
