// The runs_csv fuzz target: `pipesim fit --measurements` files (tools/fit_runs.hpp), then the
// prediction of each run that the fit starts from.
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
    require(r.seconds > 0 && std::isfinite(r.seconds), r.where + ": measured seconds " + std::to_string(r.seconds));
    double predicted = 0;
    if (!parses([&] { predicted = predict_run_seconds(r, r.config.cluster.gpu.efficiency); }, "predict_run_seconds"))
      continue;
    require_finite_non_negative(predicted, r.where + ": predicted seconds");
  }
}

}  // namespace pipesim::fuzz
