#pragma once
// CudaContext: one GPU, one CUDA stream and one cuBLAS handle bound to it. Every kernel and
// GEMM of kernels/cuda/ runs on the context's stream, in issue order, so a block's F, I and
// W need no other synchronisation; the host waits only where it copies results back
// (transfer.hpp) or calls synchronize(). A context is used by one host thread at a time;
// the executor would give each virtual device its own context (and stream).
//
// The context must outlive every buffer, block and stage made with it.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/cuda/device_buffer.hpp"

namespace pipesim {

// How the GEMMs multiply. Bf16: both operands rounded to bfloat16 (8 mantissa bits) right
// before the product, accumulated and written in fp32 (the mixed precision). Fp32:
// fp32 operands and accumulation (CUBLAS_COMPUTE_32F, no TF32), for finite differences and
// a tight comparison with the CPU reference. Everything outside the GEMMs is fp32 in both.
enum class GemmPrecision : std::uint8_t { Bf16, Fp32 };
const char* precision_name(GemmPrecision p);  // "bf16", "fp32"

// Makes `device`'s default memory pool keep the memory freed into it instead of giving it
// back to the driver at each synchronisation (release threshold: unlimited). Code that
// synchronises after every op (the executor's backend, the profiler) would otherwise map
// its buffers anew for each op. CudaError when a call fails.
void keep_pool_memory(int device);

class CudaContext {
 public:
  // Selects `device`, creates a non-blocking stream and a cuBLAS handle on it. CudaError
  // when there is no such device or a call fails.
  explicit CudaContext(int device = 0);
  // The same on a stream made elsewhere (an SmPartition group's): `owner` keeps it alive,
  // and the context neither creates nor destroys it.
  CudaContext(int device, cudaStream_t stream, std::shared_ptr<const void> owner);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }

  // Waits for everything issued so far; CudaError (naming `op`) for any asynchronous
  // failure it reveals.
  void synchronize(const std::string& op) const;

  // A device vector of at least `count` ones (column sums are GEMVs against it). Growing it
  // under an ArenaScope (a graph capture) is a CudaError: make it first.
  const float* ones(std::int64_t count);

 private:
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  static constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;  // cuBLAS's advice for Hopper
  void* workspace_ = nullptr;                 // cuBLAS's (cudaMalloc: outlives every capture)
  bool own_stream_ = true;                    // false: made elsewhere, kept alive by stream_owner_
  std::shared_ptr<const void> stream_owner_;
  DeviceBuffer<float> ones_;
};

}  // namespace pipesim
