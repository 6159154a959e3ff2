#pragma once
// DeviceBuffer<T>: `count` numbers of GPU memory, owned (move-only, freed by the
// destructor). Allocation is stream-ordered (cudaMallocAsync / cudaFreeAsync on the
// context's stream), so releasing a cache entry in the middle of a backward costs no device
// synchronisation and the pool reuses the bytes; the buffer must therefore only be used on
// that stream (every kernel in kernels/cuda/ is). DeviceMatrix adds a row-major shape.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

#include "kernels/cuda/cuda_error.hpp"

namespace pipesim {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // CudaError (naming `op`) when the allocation fails; count 0 holds nothing.
  DeviceBuffer(std::int64_t count, cudaStream_t stream, const std::string& op) : stream_(stream) {
    if (count < 0) throw CudaError("cuda: negative buffer size in " + op);
    if (count == 0) return;
    void* p = nullptr;
    cuda_check(cudaMallocAsync(&p, static_cast<std::size_t>(count) * sizeof(T), stream), "cudaMallocAsync", op);
    data_ = static_cast<T*>(p);
    count_ = count;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      DeviceBuffer gone(std::move(*this));
      swap(o);
    }
    return *this;
  }
  ~DeviceBuffer() {
    if (!data_) return;
    const cudaError_t status = cudaFreeAsync(data_, stream_);
    // A destructor cannot throw: say it once on stderr (the bytes leak, nothing else breaks).
    if (status != cudaSuccess) std::fprintf(stderr, "pipesim: warning: cudaFreeAsync: %s\n", cudaGetErrorString(status));
  }

  // Frees now (stream-ordered), checked.
  void reset(const std::string& op) {
    if (!data_) return;
    T* p = data_;
    data_ = nullptr;
    count_ = 0;
    cuda_check(cudaFreeAsync(p, stream_), "cudaFreeAsync", op);
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::int64_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  std::int64_t bytes() const { return count_ * static_cast<std::int64_t>(sizeof(T)); }
  cudaStream_t stream() const { return stream_; }

 private:
  void swap(DeviceBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(count_, o.count_);
    std::swap(stream_, o.stream_);
  }
  T* data_ = nullptr;
  std::int64_t count_ = 0;
  cudaStream_t stream_ = nullptr;
};

// A row-major rows x cols fp32 matrix on the device (an activation or its gradient: row r
// is token r's features).
struct DeviceMatrix {
  DeviceBuffer<float> buf;
  int rows = 0;
  int cols = 0;
  float* data() { return buf.data(); }
  const float* data() const { return buf.data(); }
};

}  // namespace pipesim
