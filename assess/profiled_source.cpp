#include "assess/profiled_source.hpp"

#include <string>
#include <utility>

#include "assess/analytical_source.hpp"
#include "core/error.hpp"
#include "cost_models/memory_model.hpp"
#include "cost_models/transformer.hpp"

namespace pipesim {

ProfiledSource::ProfiledSource(const ProfiledCostModel& model, GpuSpec gpu, int devices)
    : model_(model), gpu_(std::move(gpu)), devices_(devices), capacity_(gpu_.memory_bytes) {
  const ProfiledCostConfig& c = model_.config();
  const Profile& p = c.profile;
  const std::string who = "--cost-hardware " + gpu_.name + ": ";
  if (p.backend != "cuda")
    throw InputError(who + c.source + " was measured on the CPU (" + p.machine.cpu +
                     "), not on a GPU: there is no catalog machine to price it on");
  if (!gpu_.peak_flops.count(gemm_dtype(p)))
    throw InputError(who + "the catalog gives no " + gemm_dtype(p) + " peak rate, the dtype of the profile's GEMMs");
  if (p.machine.virtual_devices > 0) {
    if (gpu_.sms <= 0 || p.machine.sms > gpu_.sms)
      throw InputError(who + c.source + " timed a virtual device of " + std::to_string(p.machine.sms) +
                       " SMs, but the catalog gives this GPU " + std::to_string(gpu_.sms) + " SMs");
    share_ = static_cast<double>(p.machine.sms) / gpu_.sms;
    capacity_ = gpu_.memory_bytes / p.machine.virtual_devices;  // the devices split one GPU's memory
  }
  PIPESIM_ASSERT(devices_ >= 1);
}

Deployment ProfiledSource::deployment() const {
  const ProfiledCostConfig& c = model_.config();
  Deployment d;
  d.model = model_.model().name;
  d.hardware = gpu_.name;
  d.nodes = 1;
  d.gpus_per_node = devices_;
  d.tp = 1;
  d.dp = 1;
  d.micro_batch_size = c.micro_batch_size;
  d.seq_len = model_.model().seq_len;
  d.flops_per_sequence = model_flops_per_sequence(model_.model());
  d.peak_flops = gpu_.peak_flops.at(gemm_dtype(c.profile)) * share_;
  if (gpu_.price_per_hour) d.price_per_hour = *gpu_.price_per_hour * share_;
  d.price_source = gpu_.price_source;
  d.price_assumed = gpu_.price_assumed;
  d.capacity = capacity_;
  return d;
}

DeviceMemory ProfiledSource::device_memory(const Schedule& schedule, int device, const DeviceStats& stats) const {
  const ProfiledCostConfig& c = model_.config();
  DeviceMemory m = persistent_memory(
      schedule, device, [&](int stage) { return model_.stage_parameters(stage, schedule.num_stages); },
      bytes_per_param(dtype_bytes(gemm_dtype(c.profile)), c.optimizer == "adam"), 1, stats.peak_activation_bytes,
      stats.peak_weight_versions);
  if (schedule.num_devices > 1) m.comm_buffers = 4 * model_.message_bytes(Op{}, scale_of(schedule));
  settle(m, capacity_);
  return m;
}

}  // namespace pipesim
