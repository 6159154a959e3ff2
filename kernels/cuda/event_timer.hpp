#pragma once
// CudaEventTimer: GPU time between two points of a context's stream, from CUDA events
// (cudaEventElapsedTime, about 0.5 µs resolution). What the profiler uses on CUDA: the
// host clock would measure launch overhead, not the kernels.
//
//   CudaEventTimer t(ctx);  t.start();  block.forward(...);  double ms = t.stop_ms();
#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_context.hpp"

namespace pipesim {

class CudaEventTimer {
 public:
  explicit CudaEventTimer(const CudaContext& ctx);
  ~CudaEventTimer();
  CudaEventTimer(const CudaEventTimer&) = delete;
  CudaEventTimer& operator=(const CudaEventTimer&) = delete;

  void start();      // records the start event on the stream
  double stop_ms();  // records the stop event, waits for it, returns milliseconds since start()

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  bool started_ = false;
};

}  // namespace pipesim
