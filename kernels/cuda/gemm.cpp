#include "kernels/cuda/gemm.hpp"

#include "kernels/cuda/device_ops.hpp"

namespace pipesim {
namespace {

std::int64_t element_bytes(cudaDataType_t t) { return t == CUDA_R_16BF ? 2 : 4; }
cublasOperation_t cublas_op(bool transpose) { return transpose ? CUBLAS_OP_T : CUBLAS_OP_N; }

}  // namespace

GemmOperand GemmOperand::at(std::int64_t elements) const {
  return {static_cast<const char*>(data) + elements * element_bytes(type), type};
}

// Row-major C = op(A)·op(B)  <=>  column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: the stored row-major B read
// column-major is Bᵀ, so cuBLAS's first operand is B with B's own transpose flag, then A.
void gemm(CudaContext& ctx, const std::string& op, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
          GemmOperand a, int lda, GemmOperand b, int ldb, float beta, float* c, int ldc) {
  cublas_check(cublasGemmEx(ctx.cublas(), cublas_op(trans_b), cublas_op(trans_a), n, m, k, &alpha, b.data, b.type, ldb,
                            a.data, a.type, lda, &beta, c, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx", op);
}

void gemm_batched(CudaContext& ctx, const std::string& op, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
                  GemmOperand a, int lda, std::int64_t stride_a, GemmOperand b, int ldb, std::int64_t stride_b,
                  float beta, float* c, int ldc, std::int64_t stride_c, int batch) {
  cublas_check(cublasGemmStridedBatchedEx(ctx.cublas(), cublas_op(trans_b), cublas_op(trans_a), n, m, k, &alpha, b.data,
                                          b.type, ldb, static_cast<long long>(stride_b), a.data, a.type, lda,
                                          static_cast<long long>(stride_a), &beta, c, CUDA_R_32F, ldc,
                                          static_cast<long long>(stride_c), batch, CUBLAS_COMPUTE_32F,
                                          CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx", op);
}

// The row-major rows x cols matrix is the column-major cols x rows one; times ones(rows).
void column_sums(CudaContext& ctx, const std::string& op, const float* in, int rows, int cols, float* out,
                 bool accumulate) {
  const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  const float* ones = ctx.ones(rows);
  cublas_check(cublasSgemv(ctx.cublas(), CUBLAS_OP_N, cols, rows, &one, in, cols, ones, 1, &beta, out, 1),
               "cublasSgemv", op);
}

GemmInput::GemmInput(CudaContext& ctx, GemmPrecision precision, const float* data, std::int64_t count,
                     const std::string& op)
    : f32_(data), precision_(precision) {
  if (precision == GemmPrecision::Bf16) {
    bf16_ = DeviceBuffer<__nv_bfloat16>(count, ctx.stream(), op + " (bf16 operand)");
    cast_to_bf16(data, bf16_.data(), count, ctx.stream(), op + " (bf16 operand)");
  }
}

GemmOperand GemmInput::at(std::int64_t elements) const {
  return precision_ == GemmPrecision::Bf16 ? bf16_operand(bf16_.data()).at(elements) : f32_operand(f32_).at(elements);
}

}  // namespace pipesim
