#pragma once
// CudaError: what every failed CUDA runtime or cuBLAS call in kernels/cuda/ turns into. Its
// one-line message names the call, the kernel op it was part of and the library's own
// error text, e.g.
//   "cuda: cublasGemmEx in block forward: qkv = xn1·Wqkv: CUBLAS_STATUS_INVALID_VALUE"
// It is not an InputError: a CUDA failure is the machine's (no memory, a broken driver), or
// a bug here, never bad user input.
#include <cuda_runtime_api.h>
#include <cublas_v2.h>

#include <stdexcept>
#include <string>

namespace pipesim {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws CudaError("cuda: <call> in <op>: <error name>: <error text>") unless status is success.
void cuda_check(cudaError_t status, const char* call, const std::string& op);
void cublas_check(cublasStatus_t status, const char* call, const std::string& op);

// After a kernel launch: the launch's own error (bad configuration, no kernel image for this
// GPU) as CudaError naming the kernel and the op.
void cuda_check_launch(const char* kernel, const std::string& op);

// How many CUDA devices this process sees. 0, with `why` set to the runtime's answer, where
// there is no device or no (new enough) driver; CudaError for any other failure.
int cuda_device_count(std::string* why = nullptr);

}  // namespace pipesim
