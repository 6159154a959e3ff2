// k threads spinning on arithmetic for T seconds: their CPU time over cores x wall.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <vector>
int main(int argc, char** argv) {
  const int k = atoi(argv[1]); const double T = atof(argv[2]); const int cores = 2;
  std::atomic<bool> stop{false};
  std::vector<double> cpu(k);
  std::vector<std::thread> ts;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < k; ++i) ts.emplace_back([&, i] {
    volatile double x = 1;
    std::vector<float> buf(1 << 20, 1.0f);  // 4 MiB each: a working set beyond L2
    while (!stop.load(std::memory_order_relaxed)) { for (size_t j = 0; j < buf.size(); j += 16) buf[j] = buf[j] * 1.0000001f + 1e-7f; x = x * 1.0000001; }
    timespec ts; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); cpu[i] = ts.tv_sec + ts.tv_nsec * 1e-9;
  });
  std::this_thread::sleep_for(std::chrono::duration<double>(T));
  stop = true;
  for (auto& t : ts) t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double sum = 0; for (double c : cpu) sum += c;
  std::printf("%d threads on %d cores, %.2f s: their CPU time %.2f%% of the cores'\n", k, cores, wall, 100 * sum / (cores * wall));
}
