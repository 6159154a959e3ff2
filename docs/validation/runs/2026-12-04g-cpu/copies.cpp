// GradSync copies as the executor makes them (2 members, export to a fresh vector, the last
// arriver sums and frees the other's part, each imports the sum, the last importer frees it)
// against the profile probe's pattern (one thread, 8 held copies). Thread CPU time per copy.
#include <Eigen/Dense>
#include <atomic>
#include <barrier>
#include <cstdio>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>
#include <algorithm>
#include <time.h>
using V = Eigen::VectorXf;
double cpu() { timespec t{}; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 118000;
  const int rounds = argc > 2 ? atoi(argv[2]) : 300;
  Eigen::MatrixXf a = Eigen::MatrixXf::Random(128, 128), b = Eigen::MatrixXf::Random(128, 128);
  auto work = [&](Eigen::MatrixXf& c) { for (int i = 0; i < 8; ++i) c.noalias() = a * b; };  // ~ a pass
  // One thread, 8 held copies (the probe).
  {
    V grads = V::Random(n), sum = V::Random(n);
    std::vector<V> held(8);
    std::vector<double> out, in;
    Eigen::MatrixXf c(128, 128);
    for (int r = 0; r < rounds; ++r) {
      work(c);
      V& slot = held[r % 8];
      slot = V();
      double t = cpu(); slot = grads; out.push_back(cpu() - t);
      work(c);
      t = cpu(); grads = sum; in.push_back(cpu() - t);
    }
    printf("probe    out %.1f us  in %.1f us\n", median(out) * 1e6, median(in) * 1e6);
  }
  // Two members as the executor.
  std::barrier sync(2);
  std::mutex mu;
  std::unique_ptr<V> parts[2];
  std::shared_ptr<V> reduced;
  std::vector<double> out[2], in[2];
  auto member = [&](int k) {
    V grads = V::Random(n);
    Eigen::MatrixXf c(128, 128);
    for (int r = 0; r < rounds; ++r) {
      work(c); grads.array() += 1e-3f;  // a backward accumulates into the gradient
      double t = cpu();
      auto mine = std::make_unique<V>(grads);
      out[k].push_back(cpu() - t);
      {
        std::lock_guard l(mu);
        parts[k] = std::move(mine);
        if (parts[0] && parts[1]) {  // the last: sums, frees the other part
          auto s = std::move(parts[0]);
          *s += *parts[1];
          parts[1].reset();
          reduced = std::move(s);
        }
      }
      sync.arrive_and_wait();
      std::shared_ptr<V> sum = reduced;
      sync.arrive_and_wait();
      if (k == 0) reduced.reset();
      work(c);
      t = cpu();
      grads = *sum;
      in[k].push_back(cpu() - t);
      sum.reset();
      sync.arrive_and_wait();
    }
  };
  std::thread t0(member, 0), t1(member, 1);
  t0.join(); t1.join();
  printf("executor out %.1f / %.1f us  in %.1f / %.1f us\n", median(out[0]) * 1e6, median(out[1]) * 1e6, median(in[0]) * 1e6, median(in[1]) * 1e6);
}
