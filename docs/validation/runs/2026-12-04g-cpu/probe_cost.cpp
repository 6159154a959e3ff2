// What the gradient-copy probe adds to a profile: its ring fill and the timed copies (warm-up 2
// + repeats 5, each out and in), without the stage passes between them.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include "kernels/cpu_profile_backend.hpp"
int main(int argc, char** argv) {
  const long count = atol(argv[1]);
  const int runs = argc > 2 ? atoi(argv[2]) : 7;
  pipesim::CpuProfileBackend backend;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    auto probe = backend.gradient_copies(count, 1);
    const auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < runs; ++i) probe->copy_out();
    for (int i = 0; i < runs; ++i) probe->copy_in();
    const auto t2 = std::chrono::steady_clock::now();
    printf("count %ld: ring fill %.1f ms, %d copies out and in %.1f ms\n", count,
           std::chrono::duration<double>(t1 - t0).count() * 1e3, runs, std::chrono::duration<double>(t2 - t1).count() * 1e3);
  }
}
