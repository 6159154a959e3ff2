// Kernels of device_ops.hpp. Simple on purpose: one warp per row for the row reductions
// (LayerNorm, softmax), grid-stride loops for the elementwise ones; deterministic (no
// atomics), fp32 throughout.
#include <algorithm>
#include <cmath>

#include "kernels/cuda/cuda_error.hpp"
#include "kernels/cuda/device_ops.hpp"
#include "kernels/cuda/launch.cuh"

namespace pipesim {
using namespace cuda_launch;  // kernels/cuda/launch.cuh

namespace {

constexpr float kGeluK = 0.7978845608028654f;  // sqrt(2/π)
constexpr float kGeluC = 0.044715f;

__global__ void fill_kernel(float* p, float value, std::int64_t count) {
  for (std::int64_t i = global_thread(); i < count; i += grid_threads()) p[i] = value;
}

__global__ void cast_kernel(const float* in, __nv_bfloat16* out, std::int64_t count) {
  for (std::int64_t i = global_thread(); i < count; i += grid_threads()) out[i] = __float2bfloat16(in[i]);
}

__global__ void layer_norm_forward_kernel(const float* x, const float* gain, const float* bias, float eps, int rows,
                                          int cols, float* y, float* mean, float* rstd) {
  const std::int64_t row = global_thread() / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (row >= rows) return;  // the whole warp leaves together
  const float* xr = x + row * cols;
  float* yr = y + row * cols;
  float s = 0;
  for (int c = lane; c < cols; c += 32) s += xr[c];
  const float mu = warp_sum(s) / static_cast<float>(cols);
  float q = 0;
  for (int c = lane; c < cols; c += 32) {
    const float d = xr[c] - mu;
    q += d * d;
  }
  const float r = 1.0f / sqrtf(warp_sum(q) / static_cast<float>(cols) + eps);
  for (int c = lane; c < cols; c += 32) yr[c] = (xr[c] - mu) * r * gain[c] + bias[c];
  if (lane == 0) {
    mean[row] = mu;
    rstd[row] = r;
  }
}

__global__ void layer_norm_backward_kernel(const float* dy, const float* x, const float* mean, const float* rstd,
                                           const float* gain, const float* residual, int rows, int cols, float* dx,
                                           float* dy_xhat) {
  const std::int64_t row = global_thread() / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (row >= rows) return;
  const std::int64_t base = row * cols;
  const float mu = mean[row], r = rstd[row];
  float s1 = 0, s2 = 0;
  for (int c = lane; c < cols; c += 32) {
    const float xhat = (x[base + c] - mu) * r;
    const float dxhat = dy[base + c] * gain[c];
    s1 += dxhat;
    s2 += dxhat * xhat;
  }
  const float m1 = warp_sum(s1) / static_cast<float>(cols);
  const float m2 = warp_sum(s2) / static_cast<float>(cols);
  for (int c = lane; c < cols; c += 32) {
    const float xhat = (x[base + c] - mu) * r;
    const float dxhat = dy[base + c] * gain[c];
    const float d = (dxhat - m1 - xhat * m2) * r;
    dx[base + c] = residual ? residual[base + c] + d : d;
    dy_xhat[base + c] = dy[base + c] * xhat;
  }
}

__global__ void softmax_forward_kernel(float* scores, std::int64_t rows, int seq) {
  const std::int64_t row = global_thread() / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (row >= rows) return;
  const int t = static_cast<int>(row % seq);
  float* p = scores + row * seq;
  float top = -INFINITY;
  for (int u = lane; u <= t; u += 32) top = fmaxf(top, p[u]);
  top = warp_max(top);
  float sum = 0;
  for (int u = lane; u <= t; u += 32) {
    const float e = expf(p[u] - top);
    p[u] = e;
    sum += e;
  }
  sum = warp_sum(sum);
  for (int u = lane; u < seq; u += 32) p[u] = u <= t ? p[u] / sum : 0.0f;
}

__global__ void softmax_backward_kernel(const float* probs, float* grad, std::int64_t rows, int seq, float scale) {
  const std::int64_t row = global_thread() / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  if (row >= rows) return;
  const int t = static_cast<int>(row % seq);
  const float* p = probs + row * seq;
  float* g = grad + row * seq;
  float dot = 0;
  for (int u = lane; u <= t; u += 32) dot += p[u] * g[u];
  dot = warp_sum(dot);
  for (int u = lane; u < seq; u += 32) g[u] = u <= t ? (p[u] * (g[u] - dot)) * scale : 0.0f;
}

__global__ void add_bias_kernel(float* y, const float* bias, const float* residual, std::int64_t count, int cols) {
  for (std::int64_t i = global_thread(); i < count; i += grid_threads()) {
    const float b = bias[i % cols];
    y[i] = residual ? y[i] + b + residual[i] : y[i] + b;
  }
}

__device__ float gelu(float u) {
  const float t = tanhf(kGeluK * (u + kGeluC * u * u * u));
  return 0.5f * u * (1.0f + t);
}
__device__ float gelu_grad(float u) {
  const float t = tanhf(kGeluK * (u + kGeluC * u * u * u));
  return 0.5f * (1.0f + t) + 0.5f * u * (1.0f - t * t) * kGeluK * (1.0f + (3.0f * kGeluC) * u * u);
}

__global__ void bias_gelu_kernel(float* u, const float* bias, float* g, std::int64_t count, int cols) {
  for (std::int64_t i = global_thread(); i < count; i += grid_threads()) {
    const float v = u[i] + bias[i % cols];
    u[i] = v;
    g[i] = gelu(v);
  }
}

__global__ void gelu_backward_kernel(const float* dg, const float* u, float* du, std::int64_t count) {
  for (std::int64_t i = global_thread(); i < count; i += grid_threads()) du[i] = dg[i] * gelu_grad(u[i]);
}

__global__ void add_into_kernel(float* dst, const float* src, std::int64_t count) {
  for (std::int64_t i = global_thread(); i < count; i += grid_threads()) dst[i] += src[i];
}

__global__ void sgd_kernel(float* p, const float* g, float lr, std::int64_t count, __nv_bfloat16* p_bf16) {
  for (std::int64_t i = global_thread(); i < count; i += grid_threads()) {
    const float v = p[i] - lr * g[i];
    p[i] = v;
    if (p_bf16) p_bf16[i] = __float2bfloat16(v);
  }
}

__global__ void adam_kernel(float* p, const float* g, float* m, float* v, AdamScalars s, std::int64_t count,
                            __nv_bfloat16* p_bf16) {
  for (std::int64_t i = global_thread(); i < count; i += grid_threads()) {
    const float gi = g[i];
    const float mi = s.beta1 * m[i] + (1.0f - s.beta1) * gi;
    const float vi = s.beta2 * v[i] + (1.0f - s.beta2) * (gi * gi);
    m[i] = mi;
    v[i] = vi;
    const float pi = p[i] - s.lr * (mi / s.correction1) / (sqrtf(vi / s.correction2) + s.eps);
    p[i] = pi;
    if (p_bf16) p_bf16[i] = __float2bfloat16(pi);
  }
}

}  // namespace

void fill(float* p, float value, std::int64_t count, cudaStream_t stream, const std::string& op) {
  if (count <= 0) return;
  fill_kernel<<<elementwise_blocks(count), kThreads, 0, stream>>>(p, value, count);
  cuda_check_launch("fill_kernel", op);
}

void cast_to_bf16(const float* in, __nv_bfloat16* out, std::int64_t count, cudaStream_t stream, const std::string& op) {
  if (count <= 0) return;
  cast_kernel<<<elementwise_blocks(count), kThreads, 0, stream>>>(in, out, count);
  cuda_check_launch("cast_kernel", op);
}

void layer_norm_forward(const float* x, const float* gain, const float* bias, float eps, int rows, int cols, float* y,
                        float* mean, float* rstd, cudaStream_t stream, const std::string& op) {
  if (rows <= 0) return;
  layer_norm_forward_kernel<<<row_blocks(rows), kThreads, 0, stream>>>(x, gain, bias, eps, rows, cols, y, mean, rstd);
  cuda_check_launch("layer_norm_forward_kernel", op);
}

void layer_norm_backward(const float* dy, const float* x, const float* mean, const float* rstd, const float* gain,
                         const float* residual, int rows, int cols, float* dx, float* dy_xhat, cudaStream_t stream,
                         const std::string& op) {
  if (rows <= 0) return;
  layer_norm_backward_kernel<<<row_blocks(rows), kThreads, 0, stream>>>(dy, x, mean, rstd, gain, residual, rows, cols,
                                                                        dx, dy_xhat);
  cuda_check_launch("layer_norm_backward_kernel", op);
}

void causal_softmax_forward(float* scores, std::int64_t rows, int seq, cudaStream_t stream, const std::string& op) {
  if (rows <= 0) return;
  softmax_forward_kernel<<<row_blocks(rows), kThreads, 0, stream>>>(scores, rows, seq);
  cuda_check_launch("softmax_forward_kernel", op);
}

void causal_softmax_backward(const float* probs, float* grad, std::int64_t rows, int seq, float scale,
                             cudaStream_t stream, const std::string& op) {
  if (rows <= 0) return;
  softmax_backward_kernel<<<row_blocks(rows), kThreads, 0, stream>>>(probs, grad, rows, seq, scale);
  cuda_check_launch("softmax_backward_kernel", op);
}

void add_bias(float* y, const float* bias, int rows, int cols, cudaStream_t stream, const std::string& op) {
  const std::int64_t count = static_cast<std::int64_t>(rows) * cols;
  if (count <= 0) return;
  add_bias_kernel<<<elementwise_blocks(count), kThreads, 0, stream>>>(y, bias, nullptr, count, cols);
  cuda_check_launch("add_bias_kernel", op);
}

void add_bias_residual(float* y, const float* bias, const float* residual, int rows, int cols, cudaStream_t stream,
                       const std::string& op) {
  const std::int64_t count = static_cast<std::int64_t>(rows) * cols;
  if (count <= 0) return;
  add_bias_kernel<<<elementwise_blocks(count), kThreads, 0, stream>>>(y, bias, residual, count, cols);
  cuda_check_launch("add_bias_kernel", op);
}

void bias_gelu_forward(float* u, const float* bias, float* g, int rows, int cols, cudaStream_t stream,
                       const std::string& op) {
  const std::int64_t count = static_cast<std::int64_t>(rows) * cols;
  if (count <= 0) return;
  bias_gelu_kernel<<<elementwise_blocks(count), kThreads, 0, stream>>>(u, bias, g, count, cols);
  cuda_check_launch("bias_gelu_kernel", op);
}

void gelu_backward(const float* dg, const float* u, float* du, std::int64_t count, cudaStream_t stream,
                   const std::string& op) {
  if (count <= 0) return;
  gelu_backward_kernel<<<elementwise_blocks(count), kThreads, 0, stream>>>(dg, u, du, count);
  cuda_check_launch("gelu_backward_kernel", op);
}

void add_into(float* dst, const float* src, std::int64_t count, cudaStream_t stream, const std::string& op) {
  if (count <= 0) return;
  add_into_kernel<<<elementwise_blocks(count), kThreads, 0, stream>>>(dst, src, count);
  cuda_check_launch("add_into_kernel", op);
}

void sgd_update(float* p, const float* g, float lr, std::int64_t count, __nv_bfloat16* p_bf16, cudaStream_t stream,
                const std::string& op) {
  if (count <= 0) return;
  sgd_kernel<<<elementwise_blocks(count), kThreads, 0, stream>>>(p, g, lr, count, p_bf16);
  cuda_check_launch("sgd_kernel", op);
}

void adam_update(float* p, const float* g, float* m, float* v, const AdamScalars& s, std::int64_t count,
                 __nv_bfloat16* p_bf16, cudaStream_t stream, const std::string& op) {
  if (count <= 0) return;
  adam_kernel<<<elementwise_blocks(count), kThreads, 0, stream>>>(p, g, m, v, s, count, p_bf16);
  cuda_check_launch("adam_kernel", op);
}

}  // namespace pipesim
