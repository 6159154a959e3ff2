// interval_bench: how long do prediction intervals take (assess/prediction_interval.hpp)?
//
// BM_PredictionInterval/N: N simulations of 1F1B at p = 8, m = 32 (one iteration, 512
// micro-batch ops and 8 optimizer steps) on draws of the committed gpt-small CPU profile
// (docs/validation/gpt-small-cpu-profile.json), one Simulator for all of them, as
// `simulate --samples N` runs them; the percentiles at the end included. Target (issue #14):
// N = 100 under 1 s. The profile is read and fitted once, outside the timed loop.
#include <benchmark/benchmark.h>

#include "assess/prediction_interval.hpp"
#include "schedules/generator.hpp"

namespace {

using namespace pipesim;

void BM_PredictionInterval(benchmark::State& state) {
  ProfiledCostConfig config;
  config.profile = read_profile_file(PIPESIM_BENCH_PROFILE);
  config.source = "gpt-small-cpu-profile.json";
  const ProfiledCostModel costs(config);
  ScheduleParams params;
  params.p = 8;
  params.m = 32;
  const Schedule schedule = generate("1f1b", params);
  const int samples = static_cast<int>(state.range(0));
  Simulator simulator;
  for (auto _ : state) {
    const PredictionInterval r = predict_interval(simulator, schedule, costs, {samples, 1, 0, {}});
    benchmark::DoNotOptimize(r.time_per_iteration.p50);
  }
  state.counters["simulations_per_s"] =
      benchmark::Counter(static_cast<double>(samples), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_PredictionInterval)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
