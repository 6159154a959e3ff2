#include "kernels/core_speeds.hpp"

#include <algorithm>
#include <chrono>
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

// Each block's F + I + W in a stage pass of `blocks` blocks, as the profile times them.
std::vector<double> pass_seconds(ProfileWorkload& w, int blocks) {
  std::vector<double> out;
  for (const PassTimes& t : w.stage_passes(blocks)) out.push_back(t.forward + t.input_grad + t.weight_grad);
  return out;
}

// One visit to `core`: the thread moves there and runs passes for `dwell_s` seconds, timing
// all but the first, which refills the core's caches after the move (gpt-tiny's 0.3 ms pass
// timed right after a move took x1.1-1.6 the profile's warm one); a first pass that alone
// lasts the dwell is timed (a cold start is a negligible part of it).
void visit(int core, ProfileWorkload& w, int blocks, double dwell_s, std::vector<double>& times) {
  using Clock = std::chrono::steady_clock;
  move_to(core);
  const Clock::time_point start = Clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::vector<double> first = pass_seconds(w, blocks);
  if (elapsed() >= dwell_s) {
    times.insert(times.end(), first.begin(), first.end());
    return;
  }
  do {
    const std::vector<double> more = pass_seconds(w, blocks);
    times.insert(times.end(), more.begin(), more.end());
  } while (elapsed() < dwell_s);
}

}  // namespace

CorePassSeconds block_pass_seconds_on_cores(const ModelSpec& model, int b, const std::vector<int>& cores, int rounds,
                                            double dwell_s, int stage_blocks) {
  PIPESIM_ASSERT(rounds >= 1 && dwell_s >= 0 && stage_blocks >= 1);
  std::vector<std::vector<double>> times(cores.size());
  CorePassSeconds out;
  out.visits.resize(cores.size());
  std::exception_ptr error;
  // One thread, moved from core to core: one allocator arena, warm after the first passes
  // (a thread per pass paid for fresh pages every time: 2x the pass).
  std::thread worker([&] {
    try {
      CpuProfileBackend backend(CpuClock::Wall);
      const std::unique_ptr<ProfileWorkload> w = backend.workload(model, b, 1);
      for (int core : cores) {  // untimed: the caches, the allocator
        move_to(core);
        (void)pass_seconds(*w, stage_blocks);
        (void)pass_seconds(*w, stage_blocks);
      }
      for (int r = 0; r < rounds; ++r)
        for (std::size_t c = 0; c < cores.size(); ++c) {
          std::vector<double> one;
          visit(cores[c], *w, stage_blocks, dwell_s, one);
          times[c].insert(times[c].end(), one.begin(), one.end());
          std::sort(one.begin(), one.end());
          out.visits[c].push_back(percentile(one, 0.5));
        }
    } catch (...) {
      error = std::current_exception();
    }
  });
  worker.join();
  if (error) std::rethrow_exception(error);
  for (auto& t : times) {
    std::sort(t.begin(), t.end());
    out.median.push_back(percentile(t, 0.5));
  }
  return out;
}

}  // namespace pipesim
