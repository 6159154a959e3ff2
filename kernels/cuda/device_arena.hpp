#pragma once
// DeviceArena: the fixed addresses a captured CUDA graph (stage_graphs.hpp) needs. A graph
// replays the pointers it was captured with, so every buffer an op allocates while it is
// captured must land at the same place on every replay. While an ArenaScope is active on a
// thread, every DeviceBuffer made on that thread takes its bytes from the scope's arena
// instead of the stream-ordered pool:
//
//   sizing   (no memory of its own) the buffers come from the pool as usual; the arena lays
//            out the same requests on paper (first fit, 256-byte aligned, frees reused) and
//            records the peak: the capacity one run of this op needs
//   reserved (capacity bytes, cudaMalloc'd) each request gets base + the offset the layout
//            gives; the same request sequence gives the same addresses, so a capture made
//            after reset() has the same pointers as any earlier one of the same op
//
// Buffers made in a reserved arena are borrowed: freeing one returns its range to the
// layout only while the scope is active (a temporary of the op being captured) and never
// frees memory. A request that does not fit is a CudaError (the capture falls back).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <string>

namespace pipesim {

class DeviceArena {
 public:
  DeviceArena() = default;  // sizing
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  // Makes this a reserved arena of `bytes` (freeing any earlier reservation). CudaError.
  void reserve(std::int64_t bytes, const std::string& op);
  bool reserved() const { return base_ != nullptr; }
  std::int64_t capacity() const { return capacity_; }
  std::int64_t peak() const { return peak_; }  // the most bytes laid out at once since reset()
  void reset();                                 // nothing laid out

  // The arena of this thread's active scope, or null.
  static DeviceArena* current();

  // For DeviceBuffer: sizing: the pool pointer `pooled` (already allocated) is laid out and
  // returned; reserved: base + offset. CudaError when a reserved arena is full.
  void* place(std::int64_t bytes, void* pooled, const std::string& op);
  // For DeviceBuffer: `p` is freed; its range is laid out free again (unknown p: nothing).
  void release(const void* p);

 private:
  std::int64_t lay_out(std::int64_t bytes);  // first fit; updates peak_
  char* base_ = nullptr;
  std::int64_t capacity_ = 0, peak_ = 0;
  std::map<std::int64_t, std::int64_t> live_;        // offset -> bytes, laid out now
  std::map<const void*, std::int64_t> offset_of_;    // pointer -> offset
};

// Makes `arena` the current arena of this thread until destroyed (scopes do not nest).
class ArenaScope {
 public:
  explicit ArenaScope(DeviceArena& arena);
  ~ArenaScope();
  ArenaScope(const ArenaScope&) = delete;
  ArenaScope& operator=(const ArenaScope&) = delete;

 private:
  DeviceArena* previous_;
};

}  // namespace pipesim
