#pragma once
// Experiments on real models and hardware (`--model`, `--hardware`): the analytical cost
// model from the catalogs, and what a person wants to know about each schedule there:
// tokens/s, model FLOPs utilization, memory against capacity, cost per million tokens.
#include <array>

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "cost_models/analytical.hpp"
#include "cost_models/memory_model.hpp"
#include "cost_models/profiled.hpp"
#include "schedules/generator.hpp"
#include "schedules/schedule.hpp"
#include "sim/engine.hpp"
#include "sim/metrics.hpp"
#include "tools/cli_app.hpp"
#include "traces/report_assessment.hpp"

namespace pipesim {

struct HardwareOptions {
  std::string model;                  // catalog name or file; empty: uniform costs (--fwd, --bwd)
  std::string hardware = "h100-sxm";  // comma-separated GPU names or files
  int nodes = 1;
  int gpus_per_node = 8;
  int tp = 1;
  bool sequence_parallel = false;
  bool flash_attention = true;  // the practitioner's default today (docs/cost-model.md#defaults)
  int micro_batch_size = 1;
  int global_batch_size = 0;  // sequences per optimizer step (Megatron's); 0: from -m
  std::string recompute = "none";
  std::string dtype = "bf16";
  bool zero1 = false;
  std::string intra_link;  // empty: the GPU's default
  std::string inter_link;
  // The rest of AnalyticalConfig (add_analytical_flags; cost_models/analytical.hpp).
  bool blocking_p2p = false;
  bool overlap_grad_reduce = false;
  bool scatter_gather = true;
  int grad_reduce_bytes = 2;
  std::string tp_overlap = "backward";
  bool gradient_accumulation_fusion = true;
  int vocab_multiple = 128;
  std::string partition;        // "2,3,3,2": layers per stage; empty: the rule
  int first_stage_layers = -1;  // --decoder-first-pipeline-num-layers; -1: by the rule
  int last_stage_layers = -1;   // --decoder-last-pipeline-num-layers
  std::string efficiency;       // "gemm=0.7,memory=0.85": overrides of the GPU's efficiencies
  std::string price_per_hour;   // --price-per-hour: USD per GPU-hour instead of the catalog's; empty: the catalog's
};

void add_hardware_flags(CLI::App& app, HardwareOptions& options);
// The parts of it that sweep shares (its own --hardware and --tp are lists): --sequence-parallel
// and --flash-attention; --dtype, --zero1, --intra-link and --inter-link.
void add_activation_flags(CLI::App& app, HardwareOptions& options);
void add_state_and_link_flags(CLI::App& app, HardwareOptions& options);
// Its flags and add_analytical_flags' that only the analytical model uses
// (--micro-batch-size is --cost's too).
inline constexpr std::array<const char*, 23> kGpuFlags = {
    "--hardware", "--nodes", "--gpus-per-node", "--tp", "--sequence-parallel", "--flash-attention", "--recompute",
    "--dtype", "--zero1", "--intra-link", "--inter-link", "--blocking-p2p", "--overlap-grad-reduce",
    "--scatter-gather", "--grad-reduce-bytes", "--tp-overlap", "--gradient-accumulation-fusion", "--vocab-multiple",
    "--partition", "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers", "--efficiency",
    "--price-per-hour"};
// The flags of the AnalyticalConfig settings beyond model, GPU and parallelism (p2p, TP
// overlap, gradient reduction, partition, efficiencies); add_hardware_flags adds them too.
void add_analytical_flags(CLI::App& app, HardwareOptions& options);
// --price-per-hour (simulate, compare, sweep): what a GPU-hour costs, for $/M tokens.
void add_price_flag(CLI::App& app, HardwareOptions& options);
// Applies "key=value,key=value" (--efficiency) to `e`: the keys are Efficiency's fields
// (gemm, gemm_k_overhead, tile_m, tile_n, wave_smoothing, misaligned, attention, memory,
// network). InputError naming `what` and the key.
void apply_efficiency_overrides(Efficiency& e, const std::string& text, const std::string& what);

// The analytical model for `gpu` running a pipeline of `pipeline_devices` devices (each of
// tp GPUs); data parallelism fills the rest of the cluster. InputError if it does not divide.
AnalyticalConfig make_analytical_config(const HardwareOptions& options, const std::string& gpu, int pipeline_devices);
// The data-parallel width that make_analytical_config uses: the cluster's GPUs / (tp x
// pipeline devices). InputError if it does not divide.
int data_parallel_width(const HardwareOptions& options, int pipeline_devices);

// --global-batch-size B: the micro-batches per iteration m = B / (dp x micro-batch size)
// with which `schedule` runs B sequences per optimizer step, dp being the cluster's
// (data_parallel_width; 1 for `profiled`, a measured profile of one machine). InputError
// naming B, dp and the micro-batch size when it does not divide.
int microbatches_for_global_batch(const HardwareOptions& options, std::string_view schedule,
                                  const ScheduleParams& params, bool profiled);
// Sequences per optimizer step of `schedule` with `micro_batch_size` sequences per
// micro-batch on `dp` data-parallel replicas of it (the global batch).
long long sequences_per_iteration(const Schedule& schedule, int micro_batch_size, int dp);
// With --global-batch-size: InputError unless `schedule` runs exactly that many sequences
// per iteration (a schedule file fixes its micro-batches: the file must agree with B).
void check_global_batch(const HardwareOptions& options, const Schedule& schedule, int dp);

// Why `model` cannot be cut into the stages of `schedule` (each stage at least one layer),
// or empty if it can.
std::string stage_count_problem(const ModelSpec& model, const Schedule& schedule);

// `--cost profile.json` (with --model and --micro-batch-size from HardwareOptions): the
// profiled cost model of a measured profile (cost_models/profiled.hpp, `pipesim profile`).
struct ProfiledOptions {
  std::string cost;               // the profile file; empty: not this mode
  std::string optimizer = "adam"; // the optimizer step OptStep takes: adam or sgd
  std::string fit = "auto";       // durations between profiled sizes: auto, line or piecewise
};

void add_profiled_flags(CLI::App& app, ProfiledOptions& options);
inline constexpr std::array<const char*, 2> kProfiledOnlyFlags = {"--cost-optimizer", "--cost-fit"};
// Reads and checks the profile. --model names the simulated model (the profile's when
// empty); InputError if --hardware or other GPU flags were given too.
ProfiledCostConfig make_profiled_config(const ProfiledOptions& options, const HardwareOptions& hw);

// Flags a run does not use, by what it runs on (--model: the analytical model, --cost: a
// profile, neither: uniform costs) and where its schedules come from (a file, or these
// `generators`). `reject`: giving one is an InputError with `why` (a flag the run would
// silently ignore); every group's defaults are left out of --save-config.
struct UnusedFlags {
  std::vector<std::string> flags;
  std::string why;
  bool reject;
};
std::vector<UnusedFlags> unused_flags(bool model, bool cost, bool schedule_file,
                                      const std::vector<std::string>& generators);

// One schedule on one model and GPU type.
struct Assessment {
  std::string model;     // the model's catalog name
  std::string hardware;  // the GPU's catalog name (never the file it came from)
  int nodes = 0, gpus_per_node = 0;
  int gpus = 0;          // nodes x gpus_per_node = tp x pp x dp
  int tp = 0, pp = 0, dp = 0;
  double global_batch = 0;  // sequences per optimizer step, all data-parallel replicas
  double tokens_per_iteration = 0;
  double tokens_per_s = 0;
  double mfu = 0;                        // model FLOPs (no recomputation) / (time x GPUs x peak)
  std::optional<double> price_per_hour;  // USD per GPU-hour: the catalog's or --price-per-hour
  std::string price_source;              // where it comes from ("--price-per-hour" when given)
  bool price_assumed = false;            // the catalog marks it as an assumption
  std::optional<double> cost_per_million_tokens;  // USD, if the GPU has a price
  std::vector<DeviceMemory> memory;      // per pipeline device (one of its GPUs)
  std::int64_t peak_memory = 0;          // max over devices
  int peak_device = 0;                   // the first device holding it
  std::int64_t capacity = 0;
  bool fits = true;
  std::int64_t overshoot = 0;            // peak - capacity when it does not fit
};

Assessment assess(const AnalyticalCostModel& model, const Schedule& schedule, const SimResult& result,
                  const Metrics& metrics);

// The --json object of one schedule on a model: `run`, the fields of every run
// (metrics_json, tools/report.hpp, and time_breakdown), then the assessment's (docs/json.md).
nlohmann::ordered_json assessment_json(const Assessment& a, nlohmann::ordered_json run);
std::string assessment_table(const std::vector<std::pair<Assessment, Metrics>>& rows);
// What the HTML report shows of it (traces/report_assessment.hpp).
ReportAssessment report_assessment(const Assessment& a);

}  // namespace pipesim
