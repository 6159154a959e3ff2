// Each GradSync member's copies out and in (us) as the CPU executor makes them, a line per two
// iterations (4 members each): gpt-tiny, p = 2, m = 4, 20 iterations of the schedule named.
//   B=build; g++ -std=c++20 -O2 -I. -I/usr/include/eigen3 executor_copies.cpp -o executor_copies \
//     $B/executor/libpipesim_executor.a $B/kernels/libpipesim_kernels.a $B/sim/libpipesim_sim.a \
//     $B/schedules/libpipesim_schedules.a $B/cost_models/libpipesim_cost_models.a \
//     $B/traces/libpipesim_traces.a $B/core/libpipesim_core.a -lz -lpthread
//   ./executor_copies chimera
#include <cstdio>
#include <vector>
#include "cost_models/catalog.hpp"
#include "executor/executor.hpp"
#include "schedules/generator.hpp"
using namespace pipesim;
int main(int argc, char** argv) {
  ModelSpec model = find_model("gpt-tiny");
  ScheduleParams params; params.p = 2; params.m = 4; params.iterations = 20;
  const Schedule s = generate(argv[1], params);
  const MeasuredRun run = run_schedule(s, model, RunOptions{});
  int i = 0;
  for (const SyncWork& w : run.sync_work) printf("%s%5.0f/%-4.0f", (i++ % 8 == 0) ? "\n" : " ", w.copy_out / 1e3, w.copy_in / 1e3);
  printf("\n");
}
