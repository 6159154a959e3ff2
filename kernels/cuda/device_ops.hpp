#pragma once
// The backend's own kernels (device_ops.cu), as host functions that launch on a stream and
// check the launch (CudaError naming the kernel and `op`). Matrices are row-major: row r of
// a rows x cols matrix is cols contiguous floats (one token's features), unlike the CPU
// KMat's column-major storage; transfer.hpp converts.
//
// Everything here is fp32 (bf16 appears only as the GEMM operand copies) and mirrors the
// CPU formulas of kernels/cpu_block.cpp and kernels/layer_norm.hpp term by term.
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace pipesim {

void fill(float* p, float value, std::int64_t count, cudaStream_t stream, const std::string& op);
// Round to nearest even, as __float2bfloat16 does.
void cast_to_bf16(const float* in, __nv_bfloat16* out, std::int64_t count, cudaStream_t stream, const std::string& op);

// Per row: mean, rstd = 1/sqrt(var + eps) (population variance), y = (x - mean)·rstd ⊙ gain + bias.
void layer_norm_forward(const float* x, const float* gain, const float* bias, float eps, int rows, int cols, float* y,
                        float* mean, float* rstd, cudaStream_t stream, const std::string& op);
// Per row, given dy at the output: xhat = (x - mean)·rstd, dxhat = dy ⊙ gain,
// dx = residual + rstd·(dxhat - mean(dxhat) - xhat·mean(dxhat ⊙ xhat))  (residual may be null),
// dy_xhat = dy ⊙ xhat (whose column sums are the gain gradient).
void layer_norm_backward(const float* dy, const float* x, const float* mean, const float* rstd, const float* gain,
                         const float* residual, int rows, int cols, float* dx, float* dy_xhat, cudaStream_t stream,
                         const std::string& op);

// In place on `rows` rows of `seq` scores, row r being query position t = r % seq: softmax
// over columns 0..t, exactly 0 after t.
void causal_softmax_forward(float* scores, std::int64_t rows, int seq, cudaStream_t stream, const std::string& op);
// grad holds dP on entry and dS = P ⊙ (dP - Σ P⊙dP)·scale on return (0 where masked).
void causal_softmax_backward(const float* probs, float* grad, std::int64_t rows, int seq, float scale,
                             cudaStream_t stream, const std::string& op);

// y[r, c] += bias[c]
void add_bias(float* y, const float* bias, int rows, int cols, cudaStream_t stream, const std::string& op);
// y[r, c] += bias[c] + residual[r, c]
void add_bias_residual(float* y, const float* bias, const float* residual, int rows, int cols, cudaStream_t stream,
                       const std::string& op);
// u[r, c] += bias[c]; g = GELU(u) (tanh form, GPT-2)
void bias_gelu_forward(float* u, const float* bias, float* g, int rows, int cols, cudaStream_t stream,
                       const std::string& op);
// du = dg ⊙ GELU'(u)
void gelu_backward(const float* dg, const float* u, float* du, std::int64_t count, cudaStream_t stream,
                   const std::string& op);
// dst += src
void add_into(float* dst, const float* src, std::int64_t count, cudaStream_t stream, const std::string& op);

// p -= lr·g; then, when p_bf16 is not null, p_bf16 = bf16(p) (the GEMMs' copy).
void sgd_update(float* p, const float* g, float lr, std::int64_t count, __nv_bfloat16* p_bf16, cudaStream_t stream,
                const std::string& op);
struct AdamScalars {
  float lr, beta1, beta2, eps;
  float correction1, correction2;  // 1 - β1^t, 1 - β2^t (computed in double by the caller)
};
// m = β1·m + (1-β1)·g; v = β2·v + (1-β2)·g²; p -= lr·(m/c1)/(sqrt(v/c2) + eps); p_bf16 as above.
void adam_update(float* p, const float* g, float* m, float* v, const AdamScalars& s, std::int64_t count,
                 __nv_bfloat16* p_bf16, cudaStream_t stream, const std::string& op);

}  // namespace pipesim
