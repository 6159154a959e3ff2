// A stage's passes right after the thread waited W us on a condition variable (woken by a
// helper on the other core, as a message wakes a device thread), against back to back.
#include <pthread.h>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>
#include "core/cpu_affinity.hpp"
#include "cost_models/catalog.hpp"
#include "kernels/cpu_profile_backend.hpp"
#include "kernels/optimizer.hpp"
using namespace pipesim;
double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
double mean(const std::vector<double>& v) { double s = 0; for (double x : v) s += x; return s / v.size(); }
int main(int argc, char** argv) {
  const char* name = argc > 1 ? argv[1] : "gpt-tiny";
  const int blocks = argc > 2 ? atoi(argv[2]) : 2;
  const int wait_us = argc > 3 ? atoi(argv[3]) : 300;
  const int rounds = argc > 4 ? atoi(argv[4]) : 200;
  const ModelSpec model = find_model(name);
  CpuProfileBackend backend;
  auto w = backend.workload(model, 2, 1);
  std::mutex mu; std::condition_variable cv; bool go = false, stop = false;
  std::thread helper([&] {
    pin_to_core(pthread_self(), 1);
    std::unique_lock l(mu);
    for (;;) {
      cv.wait(l, [&] { return go || stop; });
      if (stop) return;
      l.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(wait_us));
      l.lock();
      go = false;
      cv.notify_all();
    }
  });
  pin_to_core(pthread_self(), 0);
  std::vector<double> hf, hi, hw, cf, ci, cw;
  auto stage = [&](std::vector<double>& f, std::vector<double>& i, std::vector<double>& ww) {
    double F = 0, I = 0, W = 0;
    for (const PassTimes& p : w->stage_passes(blocks)) { F += p.forward; I += p.input_grad; W += p.weight_grad; }
    f.push_back(F); i.push_back(I); ww.push_back(W);
  };
  for (int r = 0; r < 10; ++r) stage(hf, hi, hw);
  hf.clear(); hi.clear(); hw.clear();
  for (int r = 0; r < rounds; ++r) {
    stage(hf, hi, hw);  // back to back (after the last one)
    { std::unique_lock l(mu); go = true; cv.notify_all(); cv.wait(l, [&] { return !go; }); }
    stage(cf, ci, cw);  // right after a wait
  }
  { std::lock_guard l(mu); stop = true; cv.notify_all(); }
  helper.join();
  std::printf("%s blocks %d wait %d us: F %.1f -> %.1f us (x%.3f, +%.1f us)  I %.1f -> %.1f (x%.3f)  W %.1f -> %.1f (x%.3f)   means F %.1f -> %.1f\n",
              name, blocks, wait_us, med(hf) * 1e6, med(cf) * 1e6, med(cf) / med(hf), (med(cf) - med(hf)) * 1e6,
              med(hi) * 1e6, med(ci) * 1e6, med(ci) / med(hi), med(hw) * 1e6, med(cw) * 1e6, med(cw) / med(hw),
              mean(hf) * 1e6, mean(cf) * 1e6);
}
