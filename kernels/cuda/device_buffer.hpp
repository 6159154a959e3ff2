#pragma once
// DeviceBuffer<T>: `count` numbers of GPU memory, owned (move-only, freed by the
// destructor). Allocation is stream-ordered (cudaMallocAsync / cudaFreeAsync on the
// context's stream), so releasing a cache entry in the middle of a backward costs no device
// synchronisation and the pool reuses the bytes; the buffer must therefore only be used on
// that stream (every kernel in kernels/cuda/ is). DeviceMatrix adds a row-major shape.
//
// Under an ArenaScope (device_arena.hpp) a buffer is laid out in the scope's arena: a
// reserved arena lends it fixed bytes (the buffer is borrowed: freeing it frees nothing),
// a sizing one records it. view() is a borrowed alias of a buffer (stage_graphs.hpp keeps
// a captured op's cache as views, at the addresses the graph replays).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

#include "kernels/cuda/cuda_error.hpp"
#include "kernels/cuda/device_arena.hpp"

namespace pipesim {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // CudaError (naming `op`) when the allocation fails; count 0 holds nothing.
  DeviceBuffer(std::int64_t count, cudaStream_t stream, const std::string& op) : stream_(stream) {
    if (count < 0) throw CudaError("cuda: negative buffer size in " + op);
    if (count == 0) return;
    const auto bytes = static_cast<std::int64_t>(count) * static_cast<std::int64_t>(sizeof(T));
    void* p = nullptr;
    DeviceArena* arena = DeviceArena::current();
    if (arena == nullptr || !arena->reserved())
      cuda_check(cudaMallocAsync(&p, static_cast<std::size_t>(bytes), stream), "cudaMallocAsync", op);
    if (arena != nullptr) {
      arena_ = arena;
      borrowed_ = arena->reserved();
      try {
        p = arena->place(bytes, p, op);
      } catch (...) {
        if (!borrowed_) (void)cudaFreeAsync(p, stream);
        throw;
      }
    }
    data_ = static_cast<T*>(p);
    count_ = count;
  }
  // A borrowed alias of `count` numbers at `data` (nothing is freed with it).
  static DeviceBuffer view(T* data, std::int64_t count, cudaStream_t stream) {
    DeviceBuffer b;
    b.data_ = data;
    b.count_ = data == nullptr ? 0 : count;
    b.stream_ = stream;
    b.borrowed_ = true;
    return b;
  }
  DeviceBuffer view() const { return view(data_, count_, stream_); }
  bool borrowed() const { return borrowed_; }
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
    if (arena_ != nullptr && arena_ == DeviceArena::current()) arena_->release(data_);
    if (borrowed_) return;
    const cudaError_t status = cudaFreeAsync(data_, stream_);
    // A destructor cannot throw: say it once on stderr (the bytes leak, nothing else breaks).
    if (status != cudaSuccess) std::fprintf(stderr, "pipesim: warning: cudaFreeAsync: %s\n", cudaGetErrorString(status));
  }

  // Frees now (stream-ordered), checked.
  void reset(const std::string& op) {
    if (!data_) return;
    T* p = data_;
    const bool borrowed = borrowed_;
    data_ = nullptr;
    count_ = 0;
    borrowed_ = false;
    if (arena_ != nullptr && arena_ == DeviceArena::current()) arena_->release(p);
    arena_ = nullptr;
    if (borrowed) return;
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
    std::swap(borrowed_, o.borrowed_);
    std::swap(arena_, o.arena_);
  }
  T* data_ = nullptr;
  std::int64_t count_ = 0;
  cudaStream_t stream_ = nullptr;
  bool borrowed_ = false;  // laid out in a reserved arena, or a view: never freed here
  // The arena it was laid out in (null: the pool, or a view). Its range goes back to that
  // arena's layout only while that arena is the thread's current one (a temporary freed
  // inside the op being captured or sized); the pointer is compared, never followed, after.
  DeviceArena* arena_ = nullptr;
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
