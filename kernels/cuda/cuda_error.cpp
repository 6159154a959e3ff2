#include "kernels/cuda/cuda_error.hpp"

namespace pipesim {

void cuda_check(cudaError_t status, const char* call, const std::string& op) {
  if (status == cudaSuccess) return;
  // A failed call is also the runtime's "last error": clear it, or the next launch check
  // (cudaGetLastError) would report this failure again as its own.
  (void)cudaGetLastError();
  throw CudaError(std::string("cuda: ") + call + " in " + op + ": " + cudaGetErrorName(status) + ": " +
                  cudaGetErrorString(status));
}

void cublas_check(cublasStatus_t status, const char* call, const std::string& op) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw CudaError(std::string("cuda: ") + call + " in " + op + ": " + cublasGetStatusName(status) + ": " +
                  cublasGetStatusString(status));
}

void cuda_check_launch(const char* kernel, const std::string& op) {
  cuda_check(cudaGetLastError(), kernel, op);
}

int cuda_device_count(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver) {
    if (why) *why = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    (void)cudaGetLastError();  // clear it, as cuda_check does
    return 0;
  }
  cuda_check(status, "cudaGetDeviceCount", "device query");
  if (count == 0 && why) *why = "cudaGetDeviceCount reports 0 devices";
  return count;
}

}  // namespace pipesim
