#pragma once
// The backend's matrix products, on row-major matrices (device_ops.hpp's layout), through
// cuBLAS (column-major) by the usual identity: a row-major C is a column-major Cᵀ, and
// Cᵀ = op(B)ᵀ·op(A)ᵀ, so cuBLAS is called with the operands swapped.
//
// Operands are fp32 or bf16 (GemmOperand); the output is always fp32 and the accumulation
// is always fp32 (CUBLAS_COMPUTE_32F). GemmInput makes an fp32 activation an operand in
// the block's precision: itself, or a bf16 copy it owns for as long as the product needs it.
#include <cuda_bf16.h>
#include <library_types.h>

#include <cstdint>
#include <string>

#include "kernels/cuda/cuda_context.hpp"

namespace pipesim {

struct GemmOperand {
  const void* data = nullptr;
  cudaDataType_t type = CUDA_R_32F;  // CUDA_R_32F or CUDA_R_16BF
  GemmOperand at(std::int64_t elements) const;  // the same matrix `elements` numbers further on
};
inline GemmOperand f32_operand(const float* p) { return {p, CUDA_R_32F}; }
inline GemmOperand bf16_operand(const __nv_bfloat16* p) { return {p, CUDA_R_16BF}; }

// C (m x n, leading dimension ldc) = alpha·op(A)·op(B) + beta·C, every matrix row-major;
// op(A) is m x k, op(B) is k x n; trans_a / trans_b transpose the stored A / B. beta = 0
// does not read C. CudaError naming `op` when cuBLAS refuses.
void gemm(CudaContext& ctx, const std::string& op, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
          GemmOperand a, int lda, GemmOperand b, int ldb, float beta, float* c, int ldc);

// `batch` such products, matrix i of each operand `stride_*` numbers after matrix i-1.
void gemm_batched(CudaContext& ctx, const std::string& op, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                  GemmOperand a, int lda, std::int64_t stride_a, GemmOperand b, int ldb, std::int64_t stride_b,
                  float beta, float* c, int ldc, std::int64_t stride_c, int batch);

// out[c] = Σ_r in[r, c] (or += with accumulate) over a row-major rows x cols fp32 matrix:
// a cuBLAS fp32 GEMV against a vector of ones (deterministic, no atomics).
void column_sums(CudaContext& ctx, const std::string& op, const float* in, int rows, int cols, float* out,
                 bool accumulate);

class GemmInput {
 public:
  // `count` fp32 numbers at `data` as an operand in `precision` (Bf16: cast now, on the stream).
  GemmInput(CudaContext& ctx, GemmPrecision precision, const float* data, std::int64_t count, const std::string& op);
  GemmOperand at(std::int64_t elements = 0) const;

 private:
  const float* f32_;
  DeviceBuffer<__nv_bfloat16> bf16_;
  GemmPrecision precision_;
};

}  // namespace pipesim
