// The runs_csv fuzz target: `pipesim fit --measurements` files (tools/fit_runs.hpp), then the
// prediction of each run that the fit starts from, and its memory.
#include <cmath>
#include <string>

#include "cost_models/catalog.hpp"
#include "fuzz/check.hpp"
#include "tools/fit_runs.hpp"

namespace pipesim::fuzz {

void runs_csv(std::string_view bytes) {
  std::vector<TrainingRun> runs;
  // No folder: a run naming a catalog file reads nothing (a fuzzer must not read files).
  if (!parses([&] { runs = parse_runs(bytes, "runs.csv", "", "256MiB"); }, "parse_runs")) return;
  require(!runs.empty(), "parse_runs: no runs and no error");
  std::size_t ops = 0;
  for (const TrainingRun& r : runs) ops += r.plan.total_ops();
  if (ops > kMaxSimulatedOps) return;
  for (const TrainingRun& r : runs) {
    require(r.seconds || r.activation_memory || r.state_memory, r.where + ": a run with nothing measured");
    if (r.seconds) require(*r.seconds > 0 && std::isfinite(*r.seconds), r.where + ": measured seconds " + std::to_string(*r.seconds));
    for (const auto& m : {r.activation_memory, r.state_memory})
      if (m) require(*m > 0, r.where + ": measured memory " + std::to_string(*m));
    RunMemory memory;
    if (parses([&] { memory = predict_run_memory(r); }, "predict_run_memory"))
      require(memory.activations >= 0 && memory.state >= 0, r.where + ": predicted memory is negative");
    double predicted = 0;
    if (!parses([&] { predicted = predict_run_seconds(r, r.config.cluster.gpu.efficiency); }, "predict_run_seconds"))
      continue;
    require_finite_non_negative(predicted, r.where + ": predicted seconds");
  }
}

}  // namespace pipesim::fuzz
