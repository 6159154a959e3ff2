// train_bench: how fast does the CPU executor train gpt-tiny on real text (issue 21's target:
// a 500-iteration convergence run of every seed schedule in a few minutes on 2 cores)?
//
//   BM_Train/<schedule>/<p>   run_schedule() of 20 iterations of m = 4 micro-batches (size 1,
//                             32 tokens each) of gpt-tiny on the fortunes corpus, Adam; the
//                             corpus is read once, outside the timed loop
//
// Counters: tokens_per_s (training tokens, 4 x 32 x 20 per run, over the wall time: the
// device threads run on every core, so real time is the measure) and s_per_iteration. The
// corpus must be installed (tools/bootstrap.sh: fortunes); the benchmark skips otherwise.
// docs/convergence.md has the command and the figures.
#include <benchmark/benchmark.h>

#include <string>

#include "core/error.hpp"
#include "cost_models/catalog.hpp"
#include "executor/executor.hpp"
#include "executor/text_corpus.hpp"
#include "schedules/generator.hpp"

namespace {

using namespace pipesim;

constexpr int kIterations = 20, kMicrobatches = 4;

void BM_Train(benchmark::State& state, const std::string& name) {
  std::shared_ptr<const TextCorpus> corpus;
  try {
    corpus = load_text_corpus("fortunes");
  } catch (const InputError& e) {
    state.SkipWithError(e.what());
    return;
  }
  ScheduleParams params;
  params.p = static_cast<int>(state.range(0));
  params.m = kMicrobatches;
  params.iterations = kIterations;
  const Schedule schedule = generate(name, params);
  const ModelSpec model = find_model("gpt-tiny");
  RunOptions options;
  options.data = corpus;
  options.optimizer = {OptimizerKind::Adam, 3e-3};
  for (auto _ : state) benchmark::DoNotOptimize(run_schedule(schedule, model, options).iteration_loss);
  const double tokens = static_cast<double>(kIterations) * kMicrobatches * model.seq_len;
  state.counters["tokens_per_s"] = benchmark::Counter(tokens, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["s_per_iteration"] =
      benchmark::Counter(kIterations, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK_CAPTURE(BM_Train, 1f1b, std::string("1f1b"))->Arg(1)->Arg(2)->Arg(4)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Train, pipedream, std::string("pipedream"))->Arg(4)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Train, amdp, std::string("amdp"))->Arg(4)->UseRealTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
