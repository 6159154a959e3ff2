#include "kernels/cuda/event_timer.hpp"

namespace pipesim {

CudaEventTimer::CudaEventTimer(const CudaContext& ctx) : stream_(ctx.stream()) {
  cuda_check(cudaEventCreate(&start_), "cudaEventCreate", "event timer");
  const cudaError_t made = cudaEventCreate(&stop_);
  if (made != cudaSuccess) {
    cudaEventDestroy(start_);
    cuda_check(made, "cudaEventCreate", "event timer");
  }
}

CudaEventTimer::~CudaEventTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}

void CudaEventTimer::start() {
  cuda_check(cudaEventRecord(start_, stream_), "cudaEventRecord", "event timer start");
  started_ = true;
}

double CudaEventTimer::stop_ms() {
  if (!started_) throw CudaError("cuda: event timer: stop_ms() without start()");
  cuda_check(cudaEventRecord(stop_, stream_), "cudaEventRecord", "event timer stop");
  cuda_check(cudaEventSynchronize(stop_), "cudaEventSynchronize", "event timer stop");
  float ms = 0;
  cuda_check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime", "event timer stop");
  started_ = false;
  return static_cast<double>(ms);
}

}  // namespace pipesim
