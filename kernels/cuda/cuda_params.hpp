#pragma once
// CudaParams: one flat group of fp32 parameters on a GPU with what training needs of it:
// the gradient (accumulated by the backward, zeroed by zero_grads), the Adam moments, and
// optionally a bf16 mirror for GEMM operands that every write of the parameters refreshes
// (as CudaBlock does). The pipeline's ends (cuda_embedding.hpp, cuda_lm_head.hpp) keep
// their tensors in one group each, in the CPU's flat layout, so host copies are memcpys.
//
// weight_copy() is a device-to-device copy of the values (and mirror) without gradient or
// optimizer state: what a kept weight version (PipeDream's stash, 2BW) needs to run F and I.
#include <cuda_bf16.h>

#include <cstdint>
#include <string>

#include "kernels/cuda/cuda_context.hpp"
#include "kernels/optimizer.hpp"

namespace pipesim {

// One Adam step of `count` numbers in place, as kernels/optimizer.cpp takes it (CudaParams and
// CudaBlock): the moments `m` and `v` made and zeroed at the first step, `steps` advanced,
// the bias corrections in double, the update in float; `bf16`, when not null, refreshed.
void adam_step_in_place(CudaContext& ctx, const AdamConfig& c, float* values, const float* grads, std::int64_t count,
                        DeviceBuffer<float>& m, DeviceBuffer<float>& v, std::int64_t& steps, __nv_bfloat16* bf16,
                        const std::string& op);

class CudaParams {
 public:
  CudaParams() = default;
  // Uploads `values` (synchronous); gradient zero. `what` names the group in errors.
  CudaParams(CudaContext& ctx, const KVec<float>& values, bool bf16_mirror, std::string what);

  std::int64_t size() const { return values_.size(); }
  bool has_grads() const { return !grads_.empty() || values_.empty(); }
  const float* data() const { return values_.data(); }
  const __nv_bfloat16* bf16() const { return bf16_.data(); }  // null without a mirror
  float* grad();                                              // InputError on a weight copy

  void zero_grads();
  void scale_grads(float s);             // gradient *= s
  void sgd_step(double lr);              // InputError when lr < 0
  void adam_step(const AdamConfig& c);   // InputError on a bad config; moments start at 0
  std::int64_t adam_steps() const { return adam_steps_; }

  // Synchronous host copies. InputError when sizes differ.
  void set(const KVec<float>& values);
  void set_grads(const KVec<float>& grads);
  KVec<float> get() const;
  KVec<float> get_grads() const;
  // Copies into `out` (size() floats) without allocating; synchronous.
  void get_grads_into(float* out) const;

  CudaParams weight_copy() const;  // device-to-device, stream-ordered; no gradient

 private:
  void check_grads(const char* who) const;
  CudaContext* ctx_ = nullptr;
  std::string what_;
  DeviceBuffer<float> values_, grads_, adam_m_, adam_v_;
  DeviceBuffer<__nv_bfloat16> bf16_;
  std::int64_t adam_steps_ = 0;
};

}  // namespace pipesim
