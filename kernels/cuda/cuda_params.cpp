#include "kernels/cuda/cuda_params.hpp"

#include <cmath>
#include <utility>

#include "kernels/cuda/device_ops.hpp"
#include "kernels/cuda/ends_ops.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

void copy_to_device(CudaContext& ctx, float* to, const float* from, std::int64_t count, const std::string& op) {
  if (count == 0) return;
  cuda_check(cudaMemcpyAsync(to, from, static_cast<std::size_t>(count) * sizeof(float), cudaMemcpyHostToDevice,
                             ctx.stream()),
             "cudaMemcpyAsync", op);
  ctx.synchronize(op);
}

void copy_to_host(CudaContext& ctx, float* to, const float* from, std::int64_t count, const std::string& op) {
  if (count == 0) return;
  cuda_check(cudaMemcpyAsync(to, from, static_cast<std::size_t>(count) * sizeof(float), cudaMemcpyDeviceToHost,
                             ctx.stream()),
             "cudaMemcpyAsync", op);
  ctx.synchronize(op);
}

}  // namespace

CudaParams::CudaParams(CudaContext& ctx, const KVec<float>& values, bool bf16_mirror, std::string what)
    : ctx_(&ctx), what_(std::move(what)) {
  const std::int64_t n = values.size();
  values_ = DeviceBuffer<float>(n, ctx.stream(), what_ + " parameters");
  grads_ = DeviceBuffer<float>(n, ctx.stream(), what_ + " gradients");
  if (bf16_mirror) bf16_ = DeviceBuffer<__nv_bfloat16>(n, ctx.stream(), what_ + " bf16 parameters");
  set(values);
  zero_grads();
}

void CudaParams::check_grads(const char* who) const {
  if (!has_grads())
    throw InputError("kernels: cuda " + what_ + " " + who + ": this is a weight copy (weight_copy) without gradients");
}

float* CudaParams::grad() {
  check_grads("grad");
  return grads_.data();
}

void CudaParams::zero_grads() {
  check_grads("zero_grads");
  if (grads_.empty()) return;
  cuda_check(cudaMemsetAsync(grads_.data(), 0, static_cast<std::size_t>(grads_.bytes()), ctx_->stream()),
             "cudaMemsetAsync", what_ + " zero_grads");
}

void CudaParams::scale_grads(float s) {
  check_grads("scale_grads");
  scale_in_place(grads_.data(), s, grads_.size(), ctx_->stream(), what_ + " scale_grads");
}

void CudaParams::sgd_step(double lr) {
  check_grads("sgd_step");
  if (!(lr >= 0)) throw InputError("kernels: sgd: lr = " + std::to_string(lr) + ", expected >= 0");
  sgd_update(values_.data(), grads_.data(), static_cast<float>(lr), values_.size(), bf16_.data(), ctx_->stream(),
             what_ + " sgd_step");
}

void CudaParams::adam_step(const AdamConfig& c) {
  check_grads("adam_step");
  check_adam_config(c);
  adam_step_in_place(*ctx_, c, values_.data(), grads_.data(), values_.size(), adam_m_, adam_v_, adam_steps_, bf16_.data(),
                     what_ + " adam_step");
}

void adam_step_in_place(CudaContext& ctx, const AdamConfig& c, float* values, const float* grads, std::int64_t count,
                        DeviceBuffer<float>& m, DeviceBuffer<float>& v, std::int64_t& steps, __nv_bfloat16* bf16,
                        const std::string& op) {
  if (m.empty() && count > 0) {
    m = DeviceBuffer<float>(count, ctx.stream(), op);
    v = DeviceBuffer<float>(count, ctx.stream(), op);
    for (DeviceBuffer<float>* moment : {&m, &v})
      cuda_check(cudaMemsetAsync(moment->data(), 0, static_cast<std::size_t>(moment->bytes()), ctx.stream()),
                 "cudaMemsetAsync", op);
  }
  steps += 1;
  // As kernels/optimizer.cpp: the bias corrections in double, everything else in float.
  const double t = static_cast<double>(steps);
  AdamScalars s{};
  s.lr = static_cast<float>(c.lr);
  s.beta1 = static_cast<float>(c.beta1);
  s.beta2 = static_cast<float>(c.beta2);
  s.eps = static_cast<float>(c.eps);
  s.correction1 = static_cast<float>(1.0 - std::pow(c.beta1, t));
  s.correction2 = static_cast<float>(1.0 - std::pow(c.beta2, t));
  adam_update(values, grads, m.data(), v.data(), s, count, bf16, ctx.stream(), op);
}

void CudaParams::set(const KVec<float>& values) {
  if (values.size() != size())
    throw InputError("kernels: cuda " + what_ + " set: " + std::to_string(values.size()) + " numbers for " +
                     std::to_string(size()) + " parameters");
  copy_to_device(*ctx_, values_.data(), values.data(), size(), what_ + " set");
  if (!bf16_.empty()) cast_to_bf16(values_.data(), bf16_.data(), size(), ctx_->stream(), what_ + " set");
}

void CudaParams::set_grads(const KVec<float>& grads) {
  check_grads("set_grads");
  if (grads.size() != size())
    throw InputError("kernels: cuda " + what_ + " set_grads: " + std::to_string(grads.size()) + " numbers for " +
                     std::to_string(size()) + " parameters");
  copy_to_device(*ctx_, grads_.data(), grads.data(), size(), what_ + " set_grads");
}

KVec<float> CudaParams::get() const {
  KVec<float> out(size());
  copy_to_host(*ctx_, out.data(), values_.data(), size(), what_ + " get");
  return out;
}

KVec<float> CudaParams::get_grads() const {
  KVec<float> out(size());
  get_grads_into(out.data());
  return out;
}

void CudaParams::get_grads_into(float* out) const {
  check_grads("get_grads");
  copy_to_host(*ctx_, out, grads_.data(), size(), what_ + " get_grads");
}

CudaParams CudaParams::weight_copy() const {
  CudaParams c;
  c.ctx_ = ctx_;
  c.what_ = what_ + " (weight copy)";
  const std::string op = what_ + " weight_copy";
  c.values_ = DeviceBuffer<float>(size(), ctx_->stream(), op);
  if (size() > 0)
    cuda_check(cudaMemcpyAsync(c.values_.data(), values_.data(), static_cast<std::size_t>(values_.bytes()),
                               cudaMemcpyDeviceToDevice, ctx_->stream()),
               "cudaMemcpyAsync", op);
  if (!bf16_.empty()) {
    c.bf16_ = DeviceBuffer<__nv_bfloat16>(size(), ctx_->stream(), op);
    cuda_check(cudaMemcpyAsync(c.bf16_.data(), bf16_.data(), static_cast<std::size_t>(bf16_.bytes()),
                               cudaMemcpyDeviceToDevice, ctx_->stream()),
               "cudaMemcpyAsync", op);
  }
  return c;
}

}  // namespace pipesim
