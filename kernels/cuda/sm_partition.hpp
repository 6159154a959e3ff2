#pragma once
// SmPartition: one GPU's streaming multiprocessors cut into equal, disjoint groups, one
// green context per group (CUDA driver API, 12.4 and later), each with its own stream. The
// executor's virtual devices on one GPU (executor/cuda_backend.hpp) each run on one group,
// so one device's kernels cannot spread over another's SMs:
//
//   H200, 132 SMs, 4 virtual devices:   [ 32 SMs | 32 SMs | 32 SMs | 32 SMs ] + 4 left idle
//                                          dev 0    dev 1    dev 2    dev 3
//
// The driver functions are looked up at run time (cudaGetDriverEntryPointByVersion), so
// nothing links libcuda and a build or a driver without green contexts still loads; the
// constructor then throws CudaError saying why, and the caller runs unpartitioned.
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

namespace pipesim {

// SMs per group when `total` SMs are cut into `groups` equal groups of a multiple of
// `alignment` SMs, at least `min_size` each (the driver's rules: on Hopper 8 and 8). 0 when
// they do not fit. Pure, so tested without a GPU.
int sms_per_partition(int total, int groups, int min_size, int alignment);

class SmPartition {
 public:
  // Cuts GPU `device` into `groups` groups. CudaError naming the reason when the driver has
  // no green contexts, the GPU has too few SMs, or a call fails.
  SmPartition(int device, int groups);
  ~SmPartition();
  SmPartition(const SmPartition&) = delete;
  SmPartition& operator=(const SmPartition&) = delete;

  int device() const { return device_; }
  int groups() const { return static_cast<int>(streams_.size()); }
  int sms_per_group() const { return sms_per_group_; }
  int total_sms() const { return total_sms_; }
  // The non-blocking stream of group `g`, valid while this object lives.
  cudaStream_t stream(int g) const { return streams_.at(static_cast<std::size_t>(g)); }

 private:
  int device_ = 0, sms_per_group_ = 0, total_sms_ = 0;
  std::vector<void*> contexts_;  // CUgreenCtx, destroyed after their streams
  void* destroy_ = nullptr;      // the driver's cuGreenCtxDestroy, looked up at construction
  std::vector<cudaStream_t> streams_;
};

}  // namespace pipesim
