#include "kernels/cuda/cuda_lm_head.hpp"

#include <string>

#include "kernels/cuda/device_ops.hpp"
#include "kernels/cuda/ends_ops.hpp"
#include "kernels/cuda/gemm.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

constexpr float kHeadLnEps = 1e-5f;  // kernels/lm_head.cpp's final-norm epsilon

KVec<float> pack(const LmHead<float>& head) {
  const Eigen::Index h = head.gain.size();
  KVec<float> flat(2 * h + head.weight.size());
  flat.segment(0, h) = head.gain.transpose();
  flat.segment(h, h) = head.bias.transpose();
  flat.tail(head.weight.size()) = Eigen::Map<const KVec<float>>(head.weight.data(), head.weight.size());
  return flat;
}

}  // namespace

std::int64_t CudaLmHeadCache::bytes() const {
  return x.bytes() + mean.bytes() + rstd.bytes() + xn.bytes() + probs.bytes() + targets.bytes() + d_gain.bytes() +
         d_bias.bytes();
}

void CudaLmHeadCache::clear() { *this = CudaLmHeadCache{}; }

CudaLmHead::CudaLmHead(CudaContext& ctx, const BlockConfig& c, const LmHead<float>& host, GemmPrecision precision)
    : ctx_(&ctx), config_(c), vocab_(static_cast<int>(host.weight.rows())), precision_(precision) {
  check_block_config(c);
  if (host.weight.rows() < 1 || host.weight.cols() != c.hidden || host.gain.size() != c.hidden ||
      host.bias.size() != c.hidden)
    throw InputError("kernels: cuda lm head: weight " + std::to_string(host.weight.rows()) + " x " +
                     std::to_string(host.weight.cols()) + ", norm " + std::to_string(host.gain.size()) +
                     "; expected an untied V x " + std::to_string(c.hidden) + " weight and a norm of " +
                     std::to_string(c.hidden));
  params_ = CudaParams(ctx, pack(host), precision == GemmPrecision::Bf16, "lm head");
}

GemmOperand CudaLmHead::weight() const {
  const std::int64_t off = 2 * static_cast<std::int64_t>(config_.hidden);
  return precision_ == GemmPrecision::Bf16 ? bf16_operand(params_.bf16()).at(off) : f32_operand(params_.data()).at(off);
}

float CudaLmHead::forward(const DeviceMatrix& x, const std::vector<int>& targets, CudaLmHeadCache& cache) const {
  const int n = config_.tokens(), h = config_.hidden, V = vocab_;
  if (x.rows != n || x.cols != h || x.buf.size() != static_cast<std::int64_t>(n) * h ||
      static_cast<int>(targets.size()) != n)
    throw InputError("kernels: cuda lm head forward: input " + std::to_string(x.rows) + " x " + std::to_string(x.cols) +
                     ", " + std::to_string(targets.size()) + " targets; expected tokens x hidden = " +
                     std::to_string(n) + " x " + std::to_string(h) + " and " + std::to_string(n) + " targets");
  for (std::size_t r = 0; r < targets.size(); ++r)
    if (targets[r] < 0 || targets[r] >= V)
      throw InputError("kernels: cuda lm head forward: target " + std::to_string(targets[r]) + " at " +
                       std::to_string(r) + " is outside the vocabulary [0, " + std::to_string(V) + ")");
  CudaContext& ctx = *ctx_;
  cudaStream_t st = ctx.stream();
  const std::string op = "lm head forward";
  const std::int64_t nh = static_cast<std::int64_t>(n) * h, nv = static_cast<std::int64_t>(n) * V;
  cache.clear();
  cache.x = DeviceBuffer<float>(nh, st, op + ": keep x");
  cuda_check(cudaMemcpyAsync(cache.x.data(), x.data(), static_cast<std::size_t>(x.buf.bytes()), cudaMemcpyDeviceToDevice,
                             st),
             "cudaMemcpyAsync", op + ": keep x");
  cache.targets = DeviceBuffer<int>(n, st, op + ": targets");
  cuda_check(cudaMemcpyAsync(cache.targets.data(), targets.data(), targets.size() * sizeof(int), cudaMemcpyHostToDevice,
                             st),
             "cudaMemcpyAsync", op + ": targets");
  cache.xn = DeviceBuffer<float>(nh, st, op);
  cache.mean = DeviceBuffer<float>(n, st, op);
  cache.rstd = DeviceBuffer<float>(n, st, op);
  const float* gain = params_.data();
  const float* bias = gain + h;
  layer_norm_forward(cache.x.data(), gain, bias, kHeadLnEps, n, h, cache.xn.data(), cache.mean.data(), cache.rstd.data(),
                     st, op + ": final norm");
  cache.probs = DeviceBuffer<float>(nv, st, op);
  {
    const GemmInput xn(ctx, precision_, cache.xn.data(), nh, op);
    gemm(ctx, op + ": logits = xn·Wᵀ", false, false, n, V, h, 1.0f, xn.at(), h, weight(), V, 0.0f, cache.probs.data(),
         V);
  }
  DeviceBuffer<double> loss_rows(n, st, op + ": loss terms");
  softmax_cross_entropy_forward(cache.probs.data(), cache.targets.data(), n, V, loss_rows.data(), st,
                                op + ": softmax cross entropy");
  std::vector<double> terms(static_cast<std::size_t>(n));
  cuda_check(cudaMemcpyAsync(terms.data(), loss_rows.data(), terms.size() * sizeof(double), cudaMemcpyDeviceToHost, st),
             "cudaMemcpyAsync", op + ": loss to the host");
  ctx.synchronize(op + ": loss to the host");
  double loss = 0;
  for (const double t : terms) loss += t;  // row order, as the CPU
  cache.holds = CudaLmHeadCache::Holds::Forward;
  return static_cast<float>(loss / static_cast<double>(n));
}

DeviceMatrix CudaLmHead::backward_input(CudaLmHeadCache& cache) const {
  if (cache.holds != CudaLmHeadCache::Holds::Forward)
    throw InputError("kernels: cuda lm head backward_input: the cache holds no forward; run forward first");
  const int n = config_.tokens(), h = config_.hidden, V = vocab_;
  const std::int64_t nh = static_cast<std::int64_t>(n) * h;
  CudaContext& ctx = *ctx_;
  cudaStream_t st = ctx.stream();
  const std::string op = "lm head backward_input";
  const float inv_n = 1.0f / static_cast<float>(n);
  softmax_cross_entropy_backward(cache.probs.data(), cache.targets.data(), n, V, inv_n, st, op + ": dlogits");
  DeviceBuffer<float> dxn(nh, st, op);
  {
    const GemmInput dlogits(ctx, precision_, cache.probs.data(), static_cast<std::int64_t>(n) * V, op);
    gemm(ctx, op + ": dxn = dlogits·W", false, true, n, h, V, 1.0f, dlogits.at(), V, weight(), V, 0.0f, dxn.data(), h);
  }
  DeviceMatrix dx;
  dx.rows = n;
  dx.cols = h;
  dx.buf = DeviceBuffer<float>(nh, st, op);
  DeviceBuffer<float> dxn_xhat(nh, st, op);
  layer_norm_backward(dxn.data(), cache.x.data(), cache.mean.data(), cache.rstd.data(), params_.data(), nullptr, n, h,
                      dx.data(), dxn_xhat.data(), st, op + ": final norm");
  cache.d_gain = DeviceBuffer<float>(h, st, op);
  cache.d_bias = DeviceBuffer<float>(h, st, op);
  column_sums(ctx, op + ": d gain", dxn_xhat.data(), n, h, cache.d_gain.data(), false);
  column_sums(ctx, op + ": d bias", dxn.data(), n, h, cache.d_bias.data(), false);
  cache.x.reset(op);
  cache.mean.reset(op);
  cache.rstd.reset(op);
  cache.holds = CudaLmHeadCache::Holds::InputGrad;
  return dx;
}

void CudaLmHead::backward_weight(CudaLmHeadCache& cache) {
  if (cache.holds != CudaLmHeadCache::Holds::InputGrad)
    throw InputError("kernels: cuda lm head backward_weight: the cache holds no input gradient; run backward_input first");
  const int n = config_.tokens(), h = config_.hidden, V = vocab_;
  if (cache.xn.size() != static_cast<std::int64_t>(n) * h || cache.probs.size() != static_cast<std::int64_t>(n) * V)
    throw InputError("kernels: cuda lm head backward_weight: the cache holds " + std::to_string(cache.xn.size()) +
                     " numbers of xn and " + std::to_string(cache.probs.size()) + " of dlogits, expected " +
                     std::to_string(static_cast<std::int64_t>(n) * h) + " and " +
                     std::to_string(static_cast<std::int64_t>(n) * V));
  CudaContext& ctx = *ctx_;
  cudaStream_t st = ctx.stream();
  const std::string op = "lm head backward_weight";
  float* grad = params_.grad();
  {
    const GemmInput xn(ctx, precision_, cache.xn.data(), cache.xn.size(), op);
    const GemmInput dlogits(ctx, precision_, cache.probs.data(), cache.probs.size(), op);
    gemm(ctx, op + ": dW += dlogitsᵀ·xn", true, false, h, V, n, 1.0f, xn.at(), h, dlogits.at(), V, 1.0f, grad + 2 * h, V);
  }
  add_into(grad, cache.d_gain.data(), h, st, op + ": gain");
  add_into(grad + h, cache.d_bias.data(), h, st, op + ": bias");
  cache.clear();
}

LmHead<float> CudaLmHead::unpack(const KVec<float>& flat) const {
  const Eigen::Index h = config_.hidden;
  LmHead<float> head;
  head.gain = flat.segment(0, h).transpose();
  head.bias = flat.segment(h, h).transpose();
  head.weight = Eigen::Map<const KMat<float>>(flat.data() + 2 * h, vocab_, h);
  return head;
}

LmHead<float> CudaLmHead::host_params() const { return unpack(params_.get()); }
LmHead<float> CudaLmHead::host_grads() const { return unpack(params_.get_grads()); }

CudaLmHead CudaLmHead::weight_copy() const {
  CudaLmHead c;
  c.ctx_ = ctx_;
  c.config_ = config_;
  c.vocab_ = vocab_;
  c.precision_ = precision_;
  c.params_ = params_.weight_copy();
  return c;
}

}  // namespace pipesim
