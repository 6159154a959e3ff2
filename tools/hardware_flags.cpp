#include "tools/hardware_flags.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/error.hpp"
#include "cost_models/efficiency_fit.hpp"
#include "tools/cli_checks.hpp"
#include "tools/cli_options.hpp"

namespace pipesim {

void add_activation_flags(CLI::App& app, HardwareOptions& o) {
  app.add_option("--sequence-parallel", o.sequence_parallel, "Sequence parallelism with TP (true/false)")
      ->capture_default_str();
  app.add_option("--flash-attention", o.flash_attention,
                 "Fused attention (FlashAttention): no s x s scores in memory; on by default, as Megatron-LM and NeMo "
                 "train today (true/false)")
      ->capture_default_str();
}

void add_state_and_link_flags(CLI::App& app, HardwareOptions& o) {
  app.add_option("--dtype", o.dtype, "Compute dtype: bf16, fp16, fp8, tf32, fp32")->capture_default_str();
  app.add_option("--zero1", o.zero1, "Shard optimizer state over data-parallel ranks (true/false)")
      ->capture_default_str();
  app.add_option("--intra-link", o.intra_link, "Link class inside a node [default: the GPU's]");
  app.add_option("--inter-link", o.inter_link, "Link class between nodes [default: the GPU's]");
}

void add_hardware_flags(CLI::App& app, HardwareOptions& o) {
  app.add_option("--model", o.model, "Model from the catalog (`pipesim catalog models`) or a catalog file");
  app.add_option("--hardware", o.hardware, "GPU type(s), comma-separated, from the catalog or a file")
      ->capture_default_str();
  app.add_option("--nodes", o.nodes, "Nodes in the cluster")->capture_default_str();
  app.add_option("--gpus-per-node", o.gpus_per_node, "GPUs per node")->capture_default_str();
  app.add_option("--tp", o.tp, "Tensor-parallel GPUs per pipeline device")->capture_default_str();
  add_activation_flags(app, o);
  app.add_option("--micro-batch-size", o.micro_batch_size, "Sequences per micro-batch")->capture_default_str();
  require_above_zero(*app.add_option("--global-batch-size", o.global_batch_size,
                                      "Sequences per optimizer step (Megatron's global batch); sets -m = B / (dp x "
                                      "micro-batch size) for each schedule, so that every schedule runs the same "
                                      "sequences per iteration (AMP and PipeDream step after every micro-batch: a "
                                      "note says so)"),
                     "a number of sequences");
  app.add_option("--recompute", o.recompute, "Activation recomputation: none, selective or full")
      ->capture_default_str();
  add_state_and_link_flags(app, o);
  add_analytical_flags(app, o);
}

void add_analytical_flags(CLI::App& app, HardwareOptions& o) {
  app.add_option("--blocking-p2p", o.blocking_p2p, "Each op waits for its own p2p send, as Megatron did in 2021 (true/false)")
      ->capture_default_str();
  app.add_option("--overlap-grad-reduce", o.overlap_grad_reduce,
                 "Data-parallel reduction overlaps the last backward (true/false)")
      ->capture_default_str();
  app.add_option("--scatter-gather", o.scatter_gather, "Each TP rank sends 1/tp of a p2p message (true/false)")
      ->capture_default_str();
  app.add_option("--grad-reduce-bytes", o.grad_reduce_bytes, "Bytes per gradient in data-parallel reductions (2 or 4)")
      ->check(CLI::IsMember({2, 4}))
      ->capture_default_str();
  app.add_option("--tp-overlap", o.tp_overlap,
                 "TP collectives under GEMMs: none, backward (Megatron's default) or all (--tp-comm-overlap)")
      ->capture_default_str();
  app.add_option("--gradient-accumulation-fusion", o.gradient_accumulation_fusion,
                 "Weight-gradient GEMMs add into the main gradients, as Megatron does since 2022 (true/false)")
      ->capture_default_str();
  app.add_option("--vocab-multiple", o.vocab_multiple, "Pad the vocabulary to a multiple of this x tp (Megatron: 128)")
      ->capture_default_str();
  app.add_option("--partition", o.partition, "Layers of each stage, comma-separated, e.g. 2,3,3,2 [default: the rule]");
  app.add_option("--decoder-first-pipeline-num-layers", o.first_stage_layers,
                 "Layers of the first pipeline device (the rest shared by the rule)");
  app.add_option("--decoder-last-pipeline-num-layers", o.last_stage_layers,
                 "Layers of the last pipeline device (the rest shared by the rule)");
  app.add_option("--efficiency", o.efficiency,
                 "Override the GPU's efficiencies, e.g. gemm=0.7,memory=0.85 (keys: docs/cost-model.md)");
}

void add_price_flag(CLI::App& app, HardwareOptions& o) {
  app.add_option("--price-per-hour", o.price_per_hour,
                 "US dollars per GPU-hour for $/M tokens, e.g. 2.49 [default: the GPU's catalog price]");
}

void apply_efficiency_overrides(Efficiency& e, const std::string& text, const std::string& what) {
  const std::vector<std::string> items = split_list(text);
  if (items.empty() && text.find_first_not_of(" ") != std::string::npos)
    throw InputError(what + " " + quote(text) + ": expected KEY=VALUE, e.g. gemm=0.7");
  std::vector<std::string> seen;
  for (const std::string& item : items) {
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string at = what + " '" + item + "'";
    if (eq == std::string::npos || eq + 1 == item.size()) throw InputError(at + ": expected KEY=VALUE, e.g. gemm=0.7");
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      throw InputError(at + ": " + key + " is given twice (which value is meant?)");
    seen.push_back(key);
    const std::string value = item.substr(eq + 1);
    double v = 0;
    std::size_t used = 0;
    try {
      v = std::stod(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != value.size() || !std::isfinite(v)) throw InputError(at + ": '" + value + "' is not a number");
    if (key == "tile_m" || key == "tile_n") {
      if (v != std::floor(v) || v < 1 || v > 4096) throw InputError(at + ": a tile side is an integer in 1..4096");
      (key == "tile_m" ? e.tile_m : e.tile_n) = static_cast<int>(v);
    } else {
      set_efficiency_value(e, parse_efficiency_param(key, at), v);
    }
  }
  check_efficiency(e, what);
}

}  // namespace pipesim
