#pragma once
// The flags of a run on a real model and machine (`--model`, `--hardware`, the cluster, the
// parallelism and the analytical model's settings), as one struct every subcommand fills.
#include <array>
#include <string>

#include "cost_models/gemm_model.hpp"
#include "tools/cli_app.hpp"

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

}  // namespace pipesim
