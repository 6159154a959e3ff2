// CudaBlock: F and I (the arithmetic of kernels/cpu_block.cpp, docs/kernels.md), on the
// device layout of device_ops.hpp. W, the optimizer and the copies are in cuda_block_weights.cpp.
//
// Weights: the flat layout stores W (in x out) column-major, which read row-major is the
// out x in matrix Wᵀ (PyTorch's nn.Linear layout). So y = x·W is gemm(x, Wview, trans_b),
// dx = dy·Wᵀ is gemm(dy, Wview), and dW += xᵀ·dy is dWview += dyᵀ·x.
#include <cmath>
#include <string>

#include "kernels/cuda/cuda_block.hpp"
#include "kernels/cuda/device_ops.hpp"
#include "core/error.hpp"

namespace pipesim {
namespace {

DeviceBuffer<float> device_floats(CudaContext& ctx, std::int64_t count, const std::string& op) {
  return DeviceBuffer<float>(count, ctx.stream(), op);
}

DeviceMatrix device_matrix(CudaContext& ctx, int rows, int cols, const std::string& op) {
  DeviceMatrix m;
  m.buf = device_floats(ctx, static_cast<std::int64_t>(rows) * cols, op);
  m.rows = rows;
  m.cols = cols;
  return m;
}

DeviceBuffer<float> device_copy(CudaContext& ctx, const DeviceBuffer<float>& from, const std::string& op) {
  DeviceBuffer<float> to = device_floats(ctx, from.size(), op);
  if (!from.empty()) {
    cuda_check(cudaMemcpyAsync(to.data(), from.data(), static_cast<std::size_t>(from.bytes()), cudaMemcpyDeviceToDevice,
                               ctx.stream()),
               "cudaMemcpyAsync", op);
  }
  return to;
}

}  // namespace

void CudaBlock::check_activation(const DeviceMatrix& m, const char* who, const char* what) const {
  if (m.rows != config_.tokens() || m.cols != config_.hidden || m.buf.size() != static_cast<std::int64_t>(m.rows) * m.cols) {
    throw InputError(std::string("kernels: cuda ") + who + ": " + what + " is " + std::to_string(m.rows) + " x " +
                     std::to_string(m.cols) + ", expected tokens x hidden = " + std::to_string(config_.tokens()) +
                     " x " + std::to_string(config_.hidden));
  }
}

const float* CudaBlock::param(BlockTensor t) const { return params_.data() + tensor_offset(config_, t); }

GemmOperand CudaBlock::weight(BlockTensor t) const {
  const std::int64_t off = tensor_offset(config_, t);
  return precision_ == GemmPrecision::Bf16 ? bf16_operand(params_bf16_.data()).at(off) : f32_operand(params_.data()).at(off);
}

DeviceMatrix CudaBlock::forward(const DeviceMatrix& x, CudaBlockCache& cache) const {
  check_activation(x, "block forward", "input");
  const BlockConfig& c = config_;
  const int n = c.tokens(), h = c.hidden, f = c.ffn, s = c.seq, a = c.heads, d = c.head_dim(), b = c.batch;
  const std::int64_t nh = static_cast<std::int64_t>(n) * h, ss = static_cast<std::int64_t>(s) * s;
  const float eps = static_cast<float>(c.ln_eps);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  CudaContext& ctx = *ctx_;
  cudaStream_t st = ctx.stream();
  const std::string op = "block forward";
  cache.clear();
  cache.x = device_copy(ctx, x.buf, op + ": keep x");

  // Attention half.
  cache.xn1 = device_floats(ctx, nh, op);
  cache.mean1 = device_floats(ctx, n, op);
  cache.rstd1 = device_floats(ctx, n, op);
  layer_norm_forward(cache.x.data(), param(BlockTensor::Ln1Gain), param(BlockTensor::Ln1Bias), eps, n, h,
                     cache.xn1.data(), cache.mean1.data(), cache.rstd1.data(), st, op + ": ln1");
  cache.qkv = device_floats(ctx, 3 * nh, op);
  {
    const GemmInput xn1(ctx, precision_, cache.xn1.data(), nh, op);
    gemm(ctx, op + ": qkv = xn1·Wqkv", false, true, n, 3 * h, h, 1.0f, xn1.at(), h, weight(BlockTensor::QkvWeight), h,
         0.0f, cache.qkv.data(), 3 * h);
  }
  add_bias(cache.qkv.data(), param(BlockTensor::QkvBias), n, 3 * h, st, op + ": qkv bias");

  // Per sequence i, all heads j at once: Q_ij is s x d at row i·s, column j·d of qkv (K at
  // h + j·d, V at 2h + j·d), so head j+1's matrices are d numbers after head j's.
  cache.probs = device_floats(ctx, b * a * ss, op);
  cache.attn = device_floats(ctx, nh, op);
  {
    const GemmInput qkv(ctx, precision_, cache.qkv.data(), 3 * nh, op);
    for (int i = 0; i < b; ++i) {
      const std::int64_t row = static_cast<std::int64_t>(i) * s * 3 * h;
      gemm_batched(ctx, op + ": scores = Q·Kᵀ/sqrt(d)", false, true, s, s, d, scale, qkv.at(row), 3 * h, d,
                   qkv.at(row + h), 3 * h, d, 0.0f, cache.probs.data() + i * a * ss, s, ss, a);
    }
    causal_softmax_forward(cache.probs.data(), static_cast<std::int64_t>(b) * a * s, s, st, op + ": causal softmax");
    const GemmInput probs(ctx, precision_, cache.probs.data(), b * a * ss, op);
    for (int i = 0; i < b; ++i) {
      const std::int64_t row = static_cast<std::int64_t>(i) * s * 3 * h;
      gemm_batched(ctx, op + ": attn = P·V", false, false, s, d, s, 1.0f, probs.at(i * a * ss), s, ss,
                   qkv.at(row + 2 * h), 3 * h, d, 0.0f, cache.attn.data() + static_cast<std::int64_t>(i) * s * h, h, d,
                   a);
    }
  }
  cache.x1 = device_floats(ctx, nh, op);
  {
    const GemmInput attn(ctx, precision_, cache.attn.data(), nh, op);
    gemm(ctx, op + ": attn·Wo", false, true, n, h, h, 1.0f, attn.at(), h, weight(BlockTensor::OutWeight), h, 0.0f,
         cache.x1.data(), h);
  }
  add_bias_residual(cache.x1.data(), param(BlockTensor::OutBias), cache.x.data(), n, h, st, op + ": x1 = x + out");

  // MLP half.
  cache.xn2 = device_floats(ctx, nh, op);
  cache.mean2 = device_floats(ctx, n, op);
  cache.rstd2 = device_floats(ctx, n, op);
  layer_norm_forward(cache.x1.data(), param(BlockTensor::Ln2Gain), param(BlockTensor::Ln2Bias), eps, n, h,
                     cache.xn2.data(), cache.mean2.data(), cache.rstd2.data(), st, op + ": ln2");
  cache.u = device_floats(ctx, static_cast<std::int64_t>(n) * f, op);
  cache.g = device_floats(ctx, static_cast<std::int64_t>(n) * f, op);
  {
    const GemmInput xn2(ctx, precision_, cache.xn2.data(), nh, op);
    gemm(ctx, op + ": u = xn2·W1", false, true, n, f, h, 1.0f, xn2.at(), h, weight(BlockTensor::MlpInWeight), h, 0.0f,
         cache.u.data(), f);
  }
  bias_gelu_forward(cache.u.data(), param(BlockTensor::MlpInBias), cache.g.data(), n, f, st, op + ": gelu");
  DeviceMatrix y = device_matrix(ctx, n, h, op);
  {
    const GemmInput g(ctx, precision_, cache.g.data(), static_cast<std::int64_t>(n) * f, op);
    gemm(ctx, op + ": g·W2", false, true, n, h, f, 1.0f, g.at(), f, weight(BlockTensor::MlpOutWeight), f, 0.0f,
         y.data(), h);
  }
  add_bias_residual(y.data(), param(BlockTensor::MlpOutBias), cache.x1.data(), n, h, st, op + ": y = x1 + mlp");
  cache.holds = CudaBlockCache::Holds::Forward;
  return y;
}

DeviceMatrix CudaBlock::backward_input(const DeviceMatrix& dy, CudaBlockCache& cache) const {
  if (cache.holds != CudaBlockCache::Holds::Forward) {
    throw InputError("kernels: cuda block backward_input: the activation cache holds no forward; run forward first");
  }
  check_activation(dy, "block backward_input", "output gradient");
  const BlockConfig& c = config_;
  const int n = c.tokens(), h = c.hidden, f = c.ffn, s = c.seq, a = c.heads, d = c.head_dim(), b = c.batch;
  const std::int64_t nh = static_cast<std::int64_t>(n) * h, nf = static_cast<std::int64_t>(n) * f;
  const std::int64_t ss = static_cast<std::int64_t>(s) * s;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  CudaContext& ctx = *ctx_;
  cudaStream_t st = ctx.stream();
  const std::string op = "block backward_input";

  // MLP half: y = x1 + GELU(u)·W2 + b2, u = LN2(x1)·W1 + b1.
  cache.d_y = device_copy(ctx, dy.buf, op + ": keep dy");
  cache.d_u = device_floats(ctx, nf, op);
  {
    DeviceBuffer<float> dg = device_floats(ctx, nf, op);
    const GemmInput dy_in(ctx, precision_, cache.d_y.data(), nh, op);
    gemm(ctx, op + ": dg = dy·W2ᵀ", false, false, n, f, h, 1.0f, dy_in.at(), h, weight(BlockTensor::MlpOutWeight), f,
         0.0f, dg.data(), f);
    gelu_backward(dg.data(), cache.u.data(), cache.d_u.data(), nf, st, op + ": gelu backward");
  }
  cache.d_out = device_floats(ctx, nh, op);
  cache.d_ln2_gain = device_floats(ctx, h, op);
  cache.d_ln2_bias = device_floats(ctx, h, op);
  {
    DeviceBuffer<float> dxn2 = device_floats(ctx, nh, op), prod = device_floats(ctx, nh, op);
    const GemmInput du(ctx, precision_, cache.d_u.data(), nf, op);
    gemm(ctx, op + ": dxn2 = du·W1ᵀ", false, false, n, h, f, 1.0f, du.at(), f, weight(BlockTensor::MlpInWeight), h,
         0.0f, dxn2.data(), h);
    layer_norm_backward(dxn2.data(), cache.x1.data(), cache.mean2.data(), cache.rstd2.data(),
                        param(BlockTensor::Ln2Gain), cache.d_y.data(), n, h, cache.d_out.data(), prod.data(), st,
                        op + ": ln2 backward");
    column_sums(ctx, op + ": ln2 gain gradient", prod.data(), n, h, cache.d_ln2_gain.data(), false);
    column_sums(ctx, op + ": ln2 bias gradient", dxn2.data(), n, h, cache.d_ln2_bias.data(), false);
  }

  // Attention half: x1 = x + attn·Wo + bo; per (sequence i, head j) as in forward.
  cache.d_qkv = device_floats(ctx, 3 * nh, op);
  {
    DeviceBuffer<float> dattn = device_floats(ctx, nh, op);
    {
      const GemmInput d_out(ctx, precision_, cache.d_out.data(), nh, op);
      gemm(ctx, op + ": dattn = dx1·Woᵀ", false, false, n, h, h, 1.0f, d_out.at(), h, weight(BlockTensor::OutWeight),
           h, 0.0f, dattn.data(), h);
    }
    DeviceBuffer<float> dprobs = device_floats(ctx, b * a * ss, op);
    const GemmInput qkv(ctx, precision_, cache.qkv.data(), 3 * nh, op);
    const GemmInput probs(ctx, precision_, cache.probs.data(), b * a * ss, op);
    const GemmInput dO(ctx, precision_, dattn.data(), nh, op);
    for (int i = 0; i < b; ++i) {
      const std::int64_t row = static_cast<std::int64_t>(i) * s * 3 * h, orow = static_cast<std::int64_t>(i) * s * h;
      gemm_batched(ctx, op + ": dP = dO·Vᵀ", false, true, s, s, d, 1.0f, dO.at(orow), h, d, qkv.at(row + 2 * h), 3 * h,
                   d, 0.0f, dprobs.data() + i * a * ss, s, ss, a);
      gemm_batched(ctx, op + ": dV = Pᵀ·dO", true, false, s, d, s, 1.0f, probs.at(i * a * ss), s, ss, dO.at(orow), h, d,
                   0.0f, cache.d_qkv.data() + row + 2 * h, 3 * h, d, a);
    }
    causal_softmax_backward(cache.probs.data(), dprobs.data(), static_cast<std::int64_t>(b) * a * s, s, scale, st,
                            op + ": causal softmax backward");
    const GemmInput ds(ctx, precision_, dprobs.data(), b * a * ss, op);
    for (int i = 0; i < b; ++i) {
      const std::int64_t row = static_cast<std::int64_t>(i) * s * 3 * h;
      gemm_batched(ctx, op + ": dQ = dS·K", false, false, s, d, s, 1.0f, ds.at(i * a * ss), s, ss, qkv.at(row + h),
                   3 * h, d, 0.0f, cache.d_qkv.data() + row, 3 * h, d, a);
      gemm_batched(ctx, op + ": dK = dSᵀ·Q", true, false, s, d, s, 1.0f, ds.at(i * a * ss), s, ss, qkv.at(row), 3 * h,
                   d, 0.0f, cache.d_qkv.data() + row + h, 3 * h, d, a);
    }
  }
  DeviceMatrix dx = device_matrix(ctx, n, h, op);
  cache.d_ln1_gain = device_floats(ctx, h, op);
  cache.d_ln1_bias = device_floats(ctx, h, op);
  {
    DeviceBuffer<float> dxn1 = device_floats(ctx, nh, op), prod = device_floats(ctx, nh, op);
    const GemmInput dqkv(ctx, precision_, cache.d_qkv.data(), 3 * nh, op);
    gemm(ctx, op + ": dxn1 = dqkv·Wqkvᵀ", false, false, n, h, 3 * h, 1.0f, dqkv.at(), 3 * h,
         weight(BlockTensor::QkvWeight), h, 0.0f, dxn1.data(), h);
    layer_norm_backward(dxn1.data(), cache.x.data(), cache.mean1.data(), cache.rstd1.data(),
                        param(BlockTensor::Ln1Gain), cache.d_out.data(), n, h, dx.data(), prod.data(), st,
                        op + ": ln1 backward");
    column_sums(ctx, op + ": ln1 gain gradient", prod.data(), n, h, cache.d_ln1_gain.data(), false);
    column_sums(ctx, op + ": ln1 bias gradient", dxn1.data(), n, h, cache.d_ln1_bias.data(), false);
  }

  // W needs only the GEMM inputs and output gradients: release the rest (stream-ordered).
  for (DeviceBuffer<float>* m : {&cache.x, &cache.qkv, &cache.probs, &cache.x1, &cache.u, &cache.mean1, &cache.rstd1,
                                 &cache.mean2, &cache.rstd2}) {
    m->reset(op + ": release");
  }
  cache.holds = CudaBlockCache::Holds::InputGrad;
  return dx;
}

}  // namespace pipesim
