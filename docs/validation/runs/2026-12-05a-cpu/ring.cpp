// N unpinned device threads on the machine's cores, C turns in flight (a ring: a thread runs
// its turn, a stage's passes and an Adam step, then hands the turn to the next thread), against
// one thread's turns back to back, in alternating phases.
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>
#include "cost_models/catalog.hpp"
#include "kernels/cpu_profile_backend.hpp"
#include "kernels/optimizer.hpp"
using namespace pipesim;
double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
double mean(const std::vector<double>& v) { double s = 0; for (double x : v) s += x; return s / v.size(); }
struct T { double f = 0, i = 0, w = 0, o = 0; };
int main(int argc, char** argv) {
  const ModelSpec model = find_model(argc > 1 ? argv[1] : "gpt-tiny");
  const int blocks = argc > 2 ? atoi(argv[2]) : 2;
  const int n = argc > 3 ? atoi(argv[3]) : 4;
  const int c = argc > 4 ? atoi(argv[4]) : 2;
  const int phases = argc > 5 ? atoi(argv[5]) : 10;
  const int rounds = argc > 6 ? atoi(argv[6]) : 10;
  CpuProfileBackend backend;
  std::vector<std::unique_ptr<ProfileWorkload>> w;
  std::vector<std::unique_ptr<OptimizerProbe>> opt;
  const std::int64_t params = 49984LL * blocks;
  for (int d = 0; d < n; ++d) { w.push_back(backend.workload(model, 2, 1 + d)); opt.push_back(backend.optimizer(params, params, 1 + d)); }
  auto turn = [&](int d) {
    T t;
    for (const PassTimes& p : w[d]->stage_passes(blocks)) { t.f += p.forward; t.i += p.input_grad; t.w += p.weight_grad; }
    t.o = opt[d]->step(OptimizerKind::Adam);
    return t;
  };
  std::vector<T> alone, ring;
  for (int d = 0; d < n; ++d) for (int k = 0; k < 3; ++k) turn(d);
  for (int ph = 0; ph < phases; ++ph) {
    for (int r = 0; r < rounds; ++r) alone.push_back(turn(0));
    // The ring: token t starts at thread t*(n/c); each thread waits for a token, runs, passes on.
    std::mutex mu; std::condition_variable cv;
    std::vector<int> has(n, 0);
    for (int k = 0; k < c; ++k) has[k * n / c] = 1;
    std::vector<std::vector<T>> got(n);
    std::vector<std::thread> th;
    for (int d = 0; d < n; ++d) th.emplace_back([&, d] {
      for (int r = 0; r < rounds; ++r) {
        { std::unique_lock l(mu); cv.wait(l, [&] { return has[d] > 0; }); --has[d]; }
        got[d].push_back(turn(d));
        { std::lock_guard l(mu); ++has[(d + 1) % n]; }
        cv.notify_all();
      }
    });
    for (auto& t : th) t.join();
    for (int d = 0; d < n; ++d) for (size_t r = 1; r < got[d].size(); ++r) ring.push_back(got[d][r]);
  }
  auto col = [](const std::vector<T>& v, double T::*m) { std::vector<double> o; for (auto& t : v) o.push_back(t.*m); return o; };
  std::printf("%s blocks %d, %d threads, %d turns at once: ", model.name.c_str(), blocks, n, c);
  for (auto [name, m] : {std::pair{"F", &T::f}, {"I", &T::i}, {"W", &T::w}, {"OPT", &T::o}})
    std::printf("%s x%.3f (mean x%.3f)  ", name, med(col(ring, m)) / med(col(alone, m)), mean(col(ring, m)) / mean(col(alone, m)));
  std::printf(" [alone F %.0f us]\n", med(col(alone, &T::f)) * 1e6);
}
