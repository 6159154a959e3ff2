#include "kernels/cuda/cuda_context.hpp"

#include <cstdint>
#include <cstdio>
#include <utility>

#include "kernels/cuda/device_ops.hpp"

namespace pipesim {

const char* precision_name(GemmPrecision p) { return p == GemmPrecision::Bf16 ? "bf16" : "fp32"; }

void keep_pool_memory(int device) {
  const std::string op = "memory pool of device " + std::to_string(device);
  cudaMemPool_t pool = nullptr;
  cuda_check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool", op);
  std::uint64_t keep = UINT64_MAX;
  cuda_check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute", op);
}

CudaContext::CudaContext(int device) : CudaContext(device, nullptr, nullptr) {}

CudaContext::CudaContext(int device, cudaStream_t stream, std::shared_ptr<const void> owner)
    : device_(device), stream_(stream), own_stream_(stream == nullptr), stream_owner_(std::move(owner)) {
  const std::string op = "context for device " + std::to_string(device);
  cuda_check(cudaSetDevice(device), "cudaSetDevice", op);
  if (own_stream_)
    cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags", op);
  const auto drop_stream = [&] {
    if (own_stream_) cudaStreamDestroy(stream_);
  };
  const cublasStatus_t created = cublasCreate(&cublas_);
  if (created != CUBLAS_STATUS_SUCCESS) {
    drop_stream();
    cublas_check(created, "cublasCreate", op);
  }
  try {
    cublas_check(cublasSetStream(cublas_, stream_), "cublasSetStream", op);
    // Plain fp32 stays fp32: no TF32 tensor-op rounding behind the fp32 mode's back.
    cublas_check(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode", op);
    // A workspace of its own, set after the stream (cublasSetStream resets it): the same
    // GEMM kernels whether launched directly or captured into a graph (stage_graphs.hpp),
    // and no allocation by cuBLAS inside a capture.
    cuda_check(cudaMalloc(&workspace_, kCublasWorkspaceBytes), "cudaMalloc", op + ": cuBLAS workspace");
    cublas_check(cublasSetWorkspace(cublas_, workspace_, kCublasWorkspaceBytes), "cublasSetWorkspace", op);
  } catch (...) {
    if (workspace_ != nullptr) cudaFree(workspace_);
    cublasDestroy(cublas_);
    drop_stream();
    throw;
  }
}

CudaContext::~CudaContext() {
  ones_ = DeviceBuffer<float>{};  // stream-ordered free before the stream goes
  if (cudaStreamSynchronize(stream_) != cudaSuccess) std::fprintf(stderr, "pipesim: warning: cudaStreamSynchronize failed\n");
  cublasDestroy(cublas_);
  cudaFree(workspace_);
  if (own_stream_) cudaStreamDestroy(stream_);
}

void CudaContext::synchronize(const std::string& op) const {
  cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize", op);
}

const float* CudaContext::ones(std::int64_t count) {
  if (ones_.size() < count) {
    // Made while a graph is captured, it would live in the op's arena and move at replay.
    if (DeviceArena::current() != nullptr && DeviceArena::current()->reserved())
      throw CudaError("cuda: the ones vector (" + std::to_string(count) + ") must be made before a graph capture");
    ones_ = DeviceBuffer<float>(count, stream_, "ones vector");
    fill(ones_.data(), 1.0f, count, stream_, "ones vector");
  }
  return ones_.data();
}

}  // namespace pipesim
