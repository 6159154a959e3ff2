#pragma once
// CudaEvent: one CUDA event, owned. Timing events (ops' GPU time, cudaEventElapsedTime) or,
// with `timing` false, plain ones for dependencies between streams: the producer records
// it after the work, the consumer's stream waits for it (cudaStreamWaitEvent) without the
// host waiting for either (executor/cuda_backend.hpp, messages between virtual devices).
#include <cuda_runtime_api.h>

#include <string>

#include "kernels/cuda/cuda_error.hpp"

namespace pipesim {

class CudaEvent {
 public:
  explicit CudaEvent(bool timing, const std::string& op) {
    cuda_check(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming),
               "cudaEventCreateWithFlags", op);
  }
  ~CudaEvent() {
    if (event_ != nullptr) (void)cudaEventDestroy(event_);
  }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  cudaEvent_t get() const { return event_; }
  void record(cudaStream_t stream, const std::string& op) {
    cuda_check(cudaEventRecord(event_, stream), "cudaEventRecord", op);
  }
  // Makes `stream` wait for the work before the last record (the host does not wait).
  void wait_on(cudaStream_t stream, const std::string& op) const {
    cuda_check(cudaStreamWaitEvent(stream, event_, 0), "cudaStreamWaitEvent", op);
  }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace pipesim
