#pragma once
// The profiled cost model as an AssessmentSource: the run priced on the GPU the profile was
// measured on (`--cost-hardware NAME`, a catalog GPU: its dense peak, memory and price), with
// the model, micro-batch size and dtype the profile measured, and the memory model's
// persistent parts (cost_models/memory_model.hpp) around the measured activations.
//
//   one pipeline device = one GPU (tp 1, dp 1: a profile times one device), or, for a
//   profile of one of N virtual devices, the timed share of one GPU: peak and price x sms /
//   the GPU's SMs, memory = the GPU's / N (the devices split one GPU's memory evenly)
//   peak        the GPU's dense peak in the dtype of the profile's GEMMs (gemm_dtype: bf16
//               on CUDA, fp32 on the CPU)
//   memory      the mixed-precision accounting of that dtype (bf16: 2 + 4 + 12 = 18 bytes a
//               parameter with Adam, what the CUDA backend holds: fp32 master, bf16 copy,
//               fp32 gradient, m and v; sgd: 10), weights x copies held, the engine's peak
//               activation bytes (measured sizes), p2p buffers (4 messages); no workspace
//               (nothing is recomputed)
#include "assess/assessment.hpp"
#include "cost_models/hardware_spec.hpp"
#include "cost_models/profiled.hpp"

namespace pipesim {

class ProfiledSource final : public AssessmentSource {
 public:
  // A run of `devices` pipeline devices. InputError when the profile is not of a GPU (a CPU
  // profile has no catalog machine), the GPU has no peak rate for the profile's dtype, or a
  // virtual device's SMs exceed the GPU's. `model` is kept by reference.
  ProfiledSource(const ProfiledCostModel& model, GpuSpec gpu, int devices);
  Deployment deployment() const override;
  DeviceMemory device_memory(const Schedule& schedule, int device, const DeviceStats& stats) const override;

 private:
  const ProfiledCostModel& model_;
  GpuSpec gpu_;
  int devices_ = 1;
  double share_ = 1;  // of one GPU per device: its SMs over the GPU's (1: a whole GPU)
  std::int64_t capacity_;  // one device's memory
};

}  // namespace pipesim
