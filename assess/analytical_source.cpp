#include "assess/analytical_source.hpp"

#include "cost_models/transformer.hpp"

namespace pipesim {

double model_flops_per_sequence(const ModelSpec& m) {
  double flops = 0;
  for (Pass pass : {Pass::Forward, Pass::InputGrad, Pass::WeightGrad})
    flops += m.layers * layer_flops(m, 1, pass) + head_flops(m, 1, pass);
  return flops;
}

Deployment AnalyticalSource::deployment() const {
  const AnalyticalConfig& c = model_.config();
  const GpuSpec& gpu = c.cluster.gpu;
  Deployment d;
  d.model = c.model.name;
  d.hardware = gpu.name;
  d.nodes = c.cluster.nodes;
  d.gpus_per_node = c.cluster.gpus_per_node;
  d.tp = c.tp;
  d.dp = c.dp;
  d.micro_batch_size = c.micro_batch_size;
  d.seq_len = c.model.seq_len;
  d.flops_per_sequence = model_flops_per_sequence(c.model);
  d.peak_flops = gpu.peak_flops.at(c.dtype);
  d.price_per_hour = gpu.price_per_hour;
  d.price_source = gpu.price_source;
  d.price_assumed = gpu.price_assumed;
  d.capacity = gpu.memory_bytes;
  return d;
}

DeviceMemory AnalyticalSource::device_memory(const Schedule& schedule, int device, const DeviceStats& stats) const {
  return pipesim::device_memory(model_, schedule, device, stats.peak_activation_bytes, stats.peak_weight_versions);
}

}  // namespace pipesim
