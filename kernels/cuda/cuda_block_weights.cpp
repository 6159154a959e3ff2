// CudaBlock: construction, W (the weight gradients), the optimizer steps and the host
// copies of the parameters; the cache's bookkeeping. F and I are in cuda_block.cpp.
#include <string>

#include "kernels/cuda/cuda_block.hpp"
#include "kernels/cuda/cuda_params.hpp"
#include "kernels/cuda/device_ops.hpp"
#include "kernels/cuda/ends_ops.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

void upload(CudaContext& ctx, const KVec<float>& from, DeviceBuffer<float>& to, const std::string& op) {
  cuda_check(cudaMemcpyAsync(to.data(), from.data(), static_cast<std::size_t>(to.bytes()), cudaMemcpyHostToDevice,
                             ctx.stream()),
             "cudaMemcpyAsync", op);
  ctx.synchronize(op);
}

KVec<float> download(CudaContext& ctx, const DeviceBuffer<float>& from, const std::string& op) {
  KVec<float> to(from.size());
  if (from.empty()) return to;
  cuda_check(cudaMemcpyAsync(to.data(), from.data(), static_cast<std::size_t>(from.bytes()), cudaMemcpyDeviceToHost,
                             ctx.stream()),
             "cudaMemcpyAsync", op);
  ctx.synchronize(op);
  return to;
}

void check_layout(const BlockConfig& mine, const BlockParams<float>& p, const char* who) {
  const BlockConfig& c = p.config;
  if (c.batch != mine.batch || c.seq != mine.seq || c.hidden != mine.hidden || c.heads != mine.heads ||
      c.ffn != mine.ffn || c.ln_eps != mine.ln_eps || p.data.size() != block_parameter_count(mine)) {
    throw InputError(std::string("kernels: cuda block ") + who + ": parameters of a block with hidden " +
                     std::to_string(c.hidden) + ", ffn " + std::to_string(c.ffn) + " (" + std::to_string(p.data.size()) +
                     " numbers) for a block with hidden " + std::to_string(mine.hidden) + ", ffn " +
                     std::to_string(mine.ffn) + " (" + std::to_string(block_parameter_count(mine)) + ")");
  }
}

}  // namespace

namespace {
// Every buffer of a cache, in one list for bytes() and view().
constexpr DeviceBuffer<float> CudaBlockCache::*kCacheBuffers[] = {
    &CudaBlockCache::x,          &CudaBlockCache::mean1,      &CudaBlockCache::rstd1,      &CudaBlockCache::qkv,
    &CudaBlockCache::probs,      &CudaBlockCache::x1,         &CudaBlockCache::mean2,      &CudaBlockCache::rstd2,
    &CudaBlockCache::u,          &CudaBlockCache::xn1,        &CudaBlockCache::attn,       &CudaBlockCache::xn2,
    &CudaBlockCache::g,          &CudaBlockCache::d_qkv,      &CudaBlockCache::d_out,      &CudaBlockCache::d_u,
    &CudaBlockCache::d_y,        &CudaBlockCache::d_ln1_gain, &CudaBlockCache::d_ln1_bias, &CudaBlockCache::d_ln2_gain,
    &CudaBlockCache::d_ln2_bias};
}  // namespace

std::int64_t CudaBlockCache::bytes() const {
  std::int64_t total = 0;
  for (const auto m : kCacheBuffers) total += (this->*m).bytes();
  return total;
}

bool CudaBlockCache::borrowed() const {
  for (const auto m : kCacheBuffers)
    if (!(this->*m).empty() && !(this->*m).borrowed()) return false;
  return true;
}

CudaBlockCache CudaBlockCache::view() const {
  CudaBlockCache v;
  v.holds = holds;
  for (const auto m : kCacheBuffers) v.*m = (this->*m).view();
  return v;
}

void CudaBlockCache::clear() { *this = CudaBlockCache{}; }

CudaBlock::CudaBlock(CudaContext& ctx, const BlockParams<float>& params, GemmPrecision precision)
    : ctx_(&ctx), config_(params.config), precision_(precision) {
  check_block_config(config_);
  const std::int64_t count = block_parameter_count(config_);
  params_ = DeviceBuffer<float>(count, ctx.stream(), "block parameters");
  grads_ = DeviceBuffer<float>(count, ctx.stream(), "block gradients");
  if (precision_ == GemmPrecision::Bf16) params_bf16_ = DeviceBuffer<__nv_bfloat16>(count, ctx.stream(), "block bf16 parameters");
  set_params(params);
  zero_grads();
}

void CudaBlock::set_params(const BlockParams<float>& p) {
  check_layout(config_, p, "set_params");
  upload(*ctx_, p.data, params_, "block set_params");
  if (precision_ == GemmPrecision::Bf16) {
    cast_to_bf16(params_.data(), params_bf16_.data(), params_.size(), ctx_->stream(), "block set_params");
  }
}

void CudaBlock::check_grads(const char* who) const {
  if (grads_.empty())
    throw InputError(std::string("kernels: cuda block ") + who +
                     ": this block is a weight copy (weight_copy) and holds no gradient");
}

CudaBlock CudaBlock::weight_copy() const {
  CudaBlock c(*ctx_, config_, precision_);
  const std::string op = "block weight_copy";
  c.params_ = DeviceBuffer<float>(params_.size(), ctx_->stream(), op);
  cuda_check(cudaMemcpyAsync(c.params_.data(), params_.data(), static_cast<std::size_t>(params_.bytes()),
                             cudaMemcpyDeviceToDevice, ctx_->stream()),
             "cudaMemcpyAsync", op);
  if (precision_ == GemmPrecision::Bf16) {
    c.params_bf16_ = DeviceBuffer<__nv_bfloat16>(params_bf16_.size(), ctx_->stream(), op);
    cuda_check(cudaMemcpyAsync(c.params_bf16_.data(), params_bf16_.data(), static_cast<std::size_t>(params_bf16_.bytes()),
                               cudaMemcpyDeviceToDevice, ctx_->stream()),
               "cudaMemcpyAsync", op);
  }
  return c;
}

void CudaBlock::scale_grads(float s) {
  check_grads("scale_grads");
  scale_in_place(grads_.data(), s, grads_.size(), ctx_->stream(), "block scale_grads");
}

void CudaBlock::set_grads(const BlockParams<float>& g) {
  check_grads("set_grads");
  check_layout(config_, g, "set_grads");
  upload(*ctx_, g.data, grads_, "block set_grads");
}

BlockParams<float> CudaBlock::params() const {
  BlockParams<float> p;
  p.config = config_;
  p.data = download(*ctx_, params_, "block params");
  return p;
}

BlockParams<float> CudaBlock::grads() const {
  check_grads("grads");
  BlockParams<float> p;
  p.config = config_;
  p.data = download(*ctx_, grads_, "block grads");
  return p;
}

float* CudaBlock::grad_data() {
  check_grads("grad_data");
  return grads_.data();
}

AdamState<float> CudaBlock::adam_state() const {
  AdamState<float> s;
  s.step = adam_steps_;
  s.m = download(*ctx_, adam_m_, "block adam state");
  s.v = download(*ctx_, adam_v_, "block adam state");
  return s;
}

void CudaBlock::zero_grads() {
  check_grads("zero_grads");
  cuda_check(cudaMemsetAsync(grads_.data(), 0, static_cast<std::size_t>(grads_.bytes()), ctx_->stream()),
             "cudaMemsetAsync", "block zero_grads");
}

void CudaBlock::backward_weight(CudaBlockCache& cache) {
  if (cache.holds != CudaBlockCache::Holds::InputGrad) {
    throw InputError("kernels: cuda block backward_weight: the activation cache holds no input gradient; run "
                     "backward_input first");
  }
  check_grads("backward_weight");
  const BlockConfig& c = config_;
  const int n = c.tokens(), h = c.hidden, f = c.ffn;
  const std::int64_t nh = static_cast<std::int64_t>(n) * h, nf = static_cast<std::int64_t>(n) * f;
  if (cache.xn1.size() != nh || cache.g.size() != nf || cache.d_qkv.size() != 3 * nh) {
    throw InputError("kernels: cuda block backward_weight: the cache holds " + std::to_string(cache.xn1.size()) +
                     " numbers of xn1 and " + std::to_string(cache.g.size()) + " of g, expected tokens x hidden = " +
                     std::to_string(nh) + " and tokens x ffn = " + std::to_string(nf));
  }
  CudaContext& ctx = *ctx_;
  cudaStream_t st = ctx.stream();
  const std::string op = "block backward_weight";
  auto grad = [&](BlockTensor t) { return grads_.data() + tensor_offset(c, t); };
  auto in = [&](const DeviceBuffer<float>& m) { return GemmInput(ctx, precision_, m.data(), m.size(), op); };
  // dWview (out x in) += dYᵀ·X for each of the four linear layers; bias += column sums of dY.
  {
    const GemmInput dy = in(cache.d_y), g = in(cache.g);
    gemm(ctx, op + ": dW2 += gᵀ·dy", true, false, h, f, n, 1.0f, dy.at(), h, g.at(), f, 1.0f,
         grad(BlockTensor::MlpOutWeight), f);
  }
  column_sums(ctx, op + ": db2", cache.d_y.data(), n, h, grad(BlockTensor::MlpOutBias), true);
  {
    const GemmInput du = in(cache.d_u), xn2 = in(cache.xn2);
    gemm(ctx, op + ": dW1 += xn2ᵀ·du", true, false, f, h, n, 1.0f, du.at(), f, xn2.at(), h, 1.0f,
         grad(BlockTensor::MlpInWeight), h);
  }
  column_sums(ctx, op + ": db1", cache.d_u.data(), n, f, grad(BlockTensor::MlpInBias), true);
  {
    const GemmInput dout = in(cache.d_out), attn = in(cache.attn);
    gemm(ctx, op + ": dWo += attnᵀ·dx1", true, false, h, h, n, 1.0f, dout.at(), h, attn.at(), h, 1.0f,
         grad(BlockTensor::OutWeight), h);
  }
  column_sums(ctx, op + ": dbo", cache.d_out.data(), n, h, grad(BlockTensor::OutBias), true);
  {
    const GemmInput dqkv = in(cache.d_qkv), xn1 = in(cache.xn1);
    gemm(ctx, op + ": dWqkv += xn1ᵀ·dqkv", true, false, 3 * h, h, n, 1.0f, dqkv.at(), 3 * h, xn1.at(), h, 1.0f,
         grad(BlockTensor::QkvWeight), h);
  }
  column_sums(ctx, op + ": dbqkv", cache.d_qkv.data(), n, 3 * h, grad(BlockTensor::QkvBias), true);
  add_into(grad(BlockTensor::Ln1Gain), cache.d_ln1_gain.data(), h, st, op + ": ln1 gain");
  add_into(grad(BlockTensor::Ln1Bias), cache.d_ln1_bias.data(), h, st, op + ": ln1 bias");
  add_into(grad(BlockTensor::Ln2Gain), cache.d_ln2_gain.data(), h, st, op + ": ln2 gain");
  add_into(grad(BlockTensor::Ln2Bias), cache.d_ln2_bias.data(), h, st, op + ": ln2 bias");
  cache.clear();
}

DeviceMatrix CudaBlock::backward(const DeviceMatrix& dy, CudaBlockCache& cache) {
  DeviceMatrix dx = backward_input(dy, cache);
  backward_weight(cache);
  return dx;
}

void CudaBlock::sgd_step(double lr) {
  check_grads("sgd_step");
  if (!(lr >= 0)) throw InputError("kernels: sgd: lr = " + std::to_string(lr) + ", expected >= 0");
  sgd_update(params_.data(), grads_.data(), static_cast<float>(lr), params_.size(),
             precision_ == GemmPrecision::Bf16 ? params_bf16_.data() : nullptr, ctx_->stream(), "block sgd_step");
}

void CudaBlock::adam_step(const AdamConfig& c) {
  check_grads("adam_step");
  check_adam_config(c);
  adam_step_in_place(*ctx_, c, params_.data(), grads_.data(), params_.size(), adam_m_, adam_v_, adam_steps_,
                     precision_ == GemmPrecision::Bf16 ? params_bf16_.data() : nullptr, "block adam_step");
}

}  // namespace pipesim
