#include "tools/analytical_setup.hpp"

#include <utility>

#include "core/error.hpp"
#include "cost_models/catalog.hpp"
#include "tools/cli_options.hpp"
#include "tools/global_batch.hpp"

namespace pipesim {
namespace {

// Pipeline replicas in `nodes` x `gpus_per_node` GPUs of pipelines of `pipeline_devices`
// devices of `tp` GPUs.
int replicas(int nodes, int gpus_per_node, int tp, int pipeline_devices) {
  if (tp <= 0) throw InputError("--tp must be positive, got " + std::to_string(tp));
  const long long group = static_cast<long long>(tp) * pipeline_devices;
  const long long gpus = static_cast<long long>(nodes) * gpus_per_node;
  if (group <= 0 || gpus % group != 0)
    throw InputError("--tp " + std::to_string(tp) + " x " + std::to_string(pipeline_devices) +
                     " pipeline devices = " + std::to_string(group) + " GPUs per pipeline, which does not divide the " +
                     std::to_string(gpus) + " GPUs of " + std::to_string(nodes) + " x " +
                     std::to_string(gpus_per_node));
  return static_cast<int>(gpus / group);
}

}  // namespace

int data_parallel_width(const HardwareOptions& o, int pipeline_devices) {
  if (o.nodes <= 0 || o.gpus_per_node <= 0)
    throw InputError("--nodes and --gpus-per-node must be positive, got " + std::to_string(o.nodes) + " and " +
                     std::to_string(o.gpus_per_node));
  return replicas(o.nodes, o.gpus_per_node, o.tp, pipeline_devices);
}

AnalyticalConfig with_parallelism(AnalyticalConfig config, int tp, int pipeline_devices, int micro_batch_size) {
  config.dp = replicas(config.cluster.nodes, config.cluster.gpus_per_node, tp, pipeline_devices);
  config.tp = tp;
  config.pipeline_devices = pipeline_devices;
  config.micro_batch_size = micro_batch_size;
  return config;
}

AnalyticalConfig make_analytical_config(const HardwareOptions& o, const std::string& gpu, int pipeline_devices) {
  AnalyticalConfig c;
  c.model = find_model(o.model);
  if (o.nodes <= 0 || o.gpus_per_node <= 0)
    throw InputError("--nodes and --gpus-per-node must be positive, got " + std::to_string(o.nodes) + " and " +
                     std::to_string(o.gpus_per_node));
  c.cluster = make_cluster(gpu, o.nodes, o.gpus_per_node, o.intra_link, o.inter_link);
  c = with_parallelism(std::move(c), o.tp, pipeline_devices, o.micro_batch_size);
  c.sequence_parallel = o.sequence_parallel;
  c.flash_attention = o.flash_attention;
  c.dtype = o.dtype;
  c.recompute = parse_recompute(o.recompute, "--recompute");
  c.zero1 = o.zero1;
  c.blocking_p2p = o.blocking_p2p;
  c.overlap_grad_reduce = o.overlap_grad_reduce;
  c.scatter_gather = o.scatter_gather;
  if (o.grad_reduce_bytes <= 0) throw InputError("--grad-reduce-bytes must be positive, got " + std::to_string(o.grad_reduce_bytes));
  c.grad_reduce_bytes = o.grad_reduce_bytes;
  c.tp_overlap = parse_tp_overlap(o.tp_overlap, "--tp-overlap");
  c.gradient_accumulation_fusion = o.gradient_accumulation_fusion;
  if (o.vocab_multiple <= 0) throw InputError("--vocab-multiple must be positive, got " + std::to_string(o.vocab_multiple));
  c.vocab_multiple = o.vocab_multiple;
  for (const std::string& item : split_list(o.partition)) {
    std::size_t used = 0;
    int layers = -1;
    try {
      layers = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || layers < 0)
      throw InputError("--partition: expected non-negative layer counts like 2,3,3,2, got '" + item + "'");
    c.partition.layers.push_back(layers);
  }
  if (!c.partition.layers.empty() && (o.first_stage_layers >= 0 || o.last_stage_layers >= 0))
    throw InputError("--partition: not with --decoder-first/last-pipeline-num-layers (it gives every stage)");
  for (const auto& [flag, value] : {std::pair{"--decoder-first-pipeline-num-layers", o.first_stage_layers},
                                    std::pair{"--decoder-last-pipeline-num-layers", o.last_stage_layers}})
    if (value < -1) throw InputError(std::string(flag) + " must be a non-negative number of layers, got " + std::to_string(value));
  c.partition.first = o.first_stage_layers;
  c.partition.last = o.last_stage_layers;
  c.efficiency = c.cluster.gpu.efficiency;
  apply_efficiency_overrides(c.efficiency, o.efficiency, "--efficiency");
  if (!o.price_per_hour.empty()) {
    GpuSpec& g = c.cluster.gpu;
    g.price_per_hour = parse_price(o.price_per_hour, "--price-per-hour", false);
    g.price_source = "--price-per-hour";
    g.price_assumed = false;
  }
  return c;
}

std::string stage_count_problem(const ModelSpec& model, const Schedule& schedule) {
  if (schedule.num_stages <= model.layers) return {};
  return schedule.name + " has " + std::to_string(schedule.num_stages) + " stages per pipeline, but " + model.name +
         " has " + std::to_string(model.layers) + " layers: a stage holds at least one layer";
}

AnalyticalCostModel analytical_model(const HardwareOptions& o, const std::string& gpu, const Schedule& schedule,
                                     std::string_view stage_hint) {
  AnalyticalCostModel model(make_analytical_config(o, gpu, schedule.num_devices));
  check_global_batch(o, schedule, model.config().dp);
  if (const std::string problem = stage_count_problem(model.config().model, schedule); !problem.empty())
    throw InputError(problem + std::string(stage_hint));
  return model;
}

}  // namespace pipesim
