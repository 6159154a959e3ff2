#include "cost_models/memory_model.hpp"

#include <string>

#include "core/error.hpp"

namespace pipesim {

BytesPerParam bytes_per_param(int element_bytes, bool adam) {
  // fp32 main gradients always; an fp32 master copy only when the weights are narrower.
  const int master = element_bytes < 4 ? 4 : 0;
  return BytesPerParam{element_bytes, 4, master + (adam ? 8 : 0)};
}

DeviceMemory persistent_memory(const Schedule& schedule, int device,
                               const std::function<std::int64_t(int stage)>& stage_parameters, BytesPerParam per,
                               int optimizer_shards, std::int64_t peak_activation_bytes, int weight_copies) {
  if (device < 0 || device >= schedule.num_devices)
    throw InputError("memory model: device " + std::to_string(device) + " is not in the schedule (devices 0.." +
                     std::to_string(schedule.num_devices - 1) + ")");
  const auto replicas = schedule.replicas_on(device);
  if (weight_copies < static_cast<int>(replicas.size()))
    throw InputError("memory model: device " + std::to_string(device) + " holds " + std::to_string(replicas.size()) +
                     " stage replicas, so it keeps at least as many weight copies, got " + std::to_string(weight_copies));
  if (peak_activation_bytes < 0) throw InputError("memory model: peak activation bytes must not be negative");
  PIPESIM_ASSERT(optimizer_shards >= 1);

  DeviceMemory m;
  m.device = device;
  m.replicas = static_cast<int>(replicas.size());
  m.weight_copies = weight_copies;
  for (const auto& replica : replicas) m.parameters += stage_parameters(replica.second);
  // Stashed versions are copies of whole replicas; with unequal replicas (Chimera's two
  // stages) a stashed copy is charged at their mean size.
  m.weights = m.replicas == 0 ? 0 : m.parameters * per.weights * weight_copies / m.replicas;
  m.gradients = m.parameters * per.gradients;
  const std::int64_t optimizer = m.parameters * per.optimizer;
  m.optimizer = (optimizer + optimizer_shards - 1) / optimizer_shards;
  m.activations = peak_activation_bytes;
  return m;
}

void settle(DeviceMemory& m, std::int64_t capacity) {
  m.total = m.weights + m.gradients + m.optimizer + m.activations + m.workspace + m.comm_buffers;
  m.capacity = capacity;
  m.fits = m.total <= m.capacity;
  m.overshoot = m.fits ? 0 : m.total - m.capacity;
}

DeviceMemory device_memory(const AnalyticalCostModel& model, const Schedule& schedule, int device,
                           std::int64_t peak_activation_bytes, int weight_copies) {
  const AnalyticalConfig& c = model.config();
  DeviceMemory m = persistent_memory(
      schedule, device, [&](int stage) { return model.stage_parameters(stage, schedule.num_stages); },
      bytes_per_param(dtype_bytes(c.dtype)), c.zero1 ? c.dp : 1, peak_activation_bytes, weight_copies);

  const Microbatch mb{c.micro_batch_size, c.tp, c.sequence_parallel, dtype_bytes(c.dtype), c.flash_attention};
  const std::int64_t full = layer_activation_bytes(c.model, mb, Recompute::None);
  if (c.recompute == Recompute::Full) m.workspace = full;
  if (c.recompute == Recompute::Selective) m.workspace = full - layer_activation_bytes(c.model, mb, Recompute::Selective);
  if (schedule.num_devices > 1) m.comm_buffers = 4 * model.message_bytes(Op{}, scale_of(schedule));
  settle(m, c.cluster.gpu.memory_bytes);
  return m;
}

DeviceMemory device_memory(const AnalyticalConfig& config, const Schedule& schedule, int device,
                           std::int64_t peak_activation_bytes, int weight_copies) {
  return device_memory(AnalyticalCostModel(config), schedule, device, peak_activation_bytes, weight_copies);
}

}  // namespace pipesim
