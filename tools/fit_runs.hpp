#pragma once
// Measured training runs and the analytical model's predictions of them: what `pipesim fit`
// fits the kernel efficiencies to, and what docs/validation/analytical.md checks.
//
// A runs file is CSV: lines starting with '#' are comments, the first other line names the
// columns, each further line is one run (fields may be "quoted", "" inside for a quote).
// Columns (a '_' in a name reads as '-'):
//   required  model, hardware, tp, pp, dp, global-batch, micro-batch-size, schedule,
//             recompute, sequence-parallel, and at least one measurement:
//   measured  seconds (the iteration time), activation-memory and state-memory (sizes such
//             as 59.25GiB: the activations, and the weights + gradients + optimizer state,
//             of the GPU that holds the most of each); a run may leave some empty, not all
//   optional  name, source (free text), chunks (v of interleaved schedules, default 2), gpus-per-node,
//             and every analytical flag of `pipesim simulate` by its name without dashes
//             (dtype, flash-attention, zero1, intra-link, inter-link, blocking-p2p,
//             overlap-grad-reduce, scatter-gather, grad-reduce-bytes, tp-overlap,
//             vocab-multiple, partition, decoder-first-pipeline-num-layers,
//             decoder-last-pipeline-num-layers, efficiency); an empty field is the default
// A model or GPU given as a catalog file ("models.json:gpt-1.7b") is read relative to the
// runs file's folder. The cluster is tp·pp·dp GPUs in nodes of gpus-per-node (8). One
// iteration is simulated (1F1B, interleaved, ... with m = global-batch / (dp ·
// micro-batch-size) micro-batches) and its makespan, optimizer step included, is the
// prediction. Every problem is an InputError "runs.csv:LINE: column 'tp': ...".
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cost_models/analytical.hpp"
#include "cost_models/efficiency_fit.hpp"
#include "schedules/generator.hpp"
#include "schedules/schedule.hpp"
#include "tools/analytical_setup.hpp"

namespace pipesim {

struct TrainingRun {
  std::string where;        // "runs.csv:7"
  std::string name;         // the "name" column, or model and parallelism
  HardwareOptions options;  // model, GPU, tp, micro-batch size, recompute, the knobs
  std::string schedule = "1f1b";
  int pp = 1, dp = 1;
  int chunks = ScheduleParams{}.v;  // v of interleaved schedules (pipesim simulate -v's default)
  long long global_batch = 0;
  int microbatches = 0;     // global-batch / (dp · micro-batch-size)
  std::optional<double> seconds;                 // measured time per iteration
  std::optional<std::int64_t> activation_memory;  // measured bytes, on the GPU that holds the most
  std::optional<std::int64_t> state_memory;       // weights + gradients + optimizer state, likewise
  // Built from the row (and checked when it was read): the config and the schedule.
  AnalyticalConfig config;
  Schedule plan;
};

// `base_dir`: where relative catalog files are looked up; `source` names the text in errors.
// Every run's schedule is kept: together they must fit in `max_memory` (a size such as
// "8GiB"; empty: what the machine has available), or the run that passes it is an InputError.
std::vector<TrainingRun> parse_runs(std::string_view text, const std::string& source, const std::string& base_dir,
                                    const std::string& max_memory = "");
std::vector<TrainingRun> read_runs_file(const std::string& path, const std::string& max_memory = "");

// Seconds of one iteration of `run` with the GPU's efficiencies `e` (the run's own
// efficiency column applied on top).
double predict_run_seconds(const TrainingRun& run, const Efficiency& e);

// The memory model's bytes for `run` (cost_models/memory_model.hpp, over one simulated
// iteration): the most any GPU holds of activations, and of weights + gradients + optimizer
// state (weight copies included), as the activation-memory and state-memory columns mean.
struct RunMemory {
  std::int64_t activations = 0, state = 0;
};
RunMemory predict_run_memory(const TrainingRun& run);

// The runs with a measured time, in file order: what fit_runs and the time table use.
std::vector<TrainingRun> timed_runs(std::vector<TrainingRun> runs);

struct RunsFit {
  EfficiencyFit fit;
  std::vector<double> before;         // predictions with the starting efficiencies
  std::vector<double> leave_one_out;  // each run predicted by a fit to all the others (empty if not asked)
  std::vector<Efficiency> fold;       // the efficiencies of each of those fits
};

// Fits `params` of `start` to the runs (fit_efficiency), and with `leave_one_out` also
// refits once without each run and predicts it. Every run has a measured time (timed_runs).
RunsFit fit_runs(const std::vector<TrainingRun>& runs, const Efficiency& start, const std::vector<EfficiencyParam>& params,
                 bool leave_one_out);

}  // namespace pipesim
