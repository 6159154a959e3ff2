// In-process speed of `pipesim sweep` (issue 20's target: docs/sweep.md's grid at >= 5,000
// evaluated configurations per second on 2 cores): run_sweep on the grid of docs/sweep.md
// and docs/performance.md (gpt3-6.7b on 32 H100s, every schedule, pp 2..16, m 8..128,
// micro-batch size 1..4, tp 1..8), with 1 and 2 threads. items_per_second is evaluated
// configurations per second. Medians over repetitions:
//   build/bench/sweep_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// bench/sweep_paired.sh compares two whole binaries on the same grid, run by run.
#include <benchmark/benchmark.h>

#include "tools/sweep.hpp"
#include "tools/sweep_grid.hpp"

namespace {

using namespace pipesim;

SweepGrid docs_grid() {
  SweepGrid g;
  g.hardware = {"h100-sxm"};
  VariantLists lists;
  lists.schedules = parse_schedule_grid("all");
  g.variants = expand_variants(lists);
  g.tp = parse_int_grid("1,2,4,8", "--tp");
  g.pp = parse_int_grid("2,4,8,16", "--pp");
  g.microbatches = parse_int_grid("8..128", "--microbatches");
  g.micro_batch_size = parse_int_grid("1,2,4", "--micro-batch-size");
  g.recompute = {"none"};
  return g;
}

void BM_SweepDocsGrid(benchmark::State& state) {
  SweepSettings settings;
  settings.hardware.model = "gpt3-6.7b";
  std::tie(settings.hardware.nodes, settings.hardware.gpus_per_node) = sweep_cluster_shape(32, 8);
  const SweepGrid grid = docs_grid();
  std::size_t evaluated = 0;
  for (auto _ : state) {
    const SweepResult r = run_sweep(settings, grid, static_cast<int>(state.range(0)));
    evaluated += r.rows.size();
    benchmark::DoNotOptimize(r.rows.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(evaluated));
}
BENCHMARK(BM_SweepDocsGrid)->ArgName("jobs")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
