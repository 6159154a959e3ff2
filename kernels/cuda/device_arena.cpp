#include "kernels/cuda/device_arena.hpp"

#include "core/error.hpp"
#include "kernels/cuda/cuda_error.hpp"

namespace pipesim {
namespace {
thread_local DeviceArena* g_current = nullptr;
constexpr std::int64_t kAlign = 256;  // cudaMalloc's alignment: cuBLAS picks the same kernels
}  // namespace

DeviceArena::~DeviceArena() {
  if (base_ != nullptr) (void)cudaFree(base_);  // a destructor cannot throw; nothing else to do
}

void DeviceArena::reserve(std::int64_t bytes, const std::string& op) {
  if (base_ != nullptr) cuda_check(cudaFree(base_), "cudaFree", op);
  base_ = nullptr;
  capacity_ = 0;
  void* p = nullptr;
  cuda_check(cudaMalloc(&p, static_cast<std::size_t>(bytes > 0 ? bytes : kAlign)), "cudaMalloc", op);
  base_ = static_cast<char*>(p);
  capacity_ = bytes;
  reset();
}

void DeviceArena::reset() {
  live_.clear();
  offset_of_.clear();
  peak_ = 0;
}

DeviceArena* DeviceArena::current() { return g_current; }

std::int64_t DeviceArena::lay_out(std::int64_t bytes) {
  const std::int64_t size = (bytes + kAlign - 1) / kAlign * kAlign;
  std::int64_t at = 0;
  for (const auto& [offset, length] : live_) {
    if (offset - at >= size) break;
    at = offset + length;
  }
  live_.emplace(at, size);
  if (at + size > peak_) peak_ = at + size;
  return at;
}

void* DeviceArena::place(std::int64_t bytes, void* pooled, const std::string& op) {
  const std::int64_t at = lay_out(bytes);
  if (base_ == nullptr) {
    offset_of_.emplace(pooled, at);
    return pooled;
  }
  if (at + bytes > capacity_) {
    live_.erase(at);
    throw CudaError("cuda: " + op + ": the graph arena of " + std::to_string(capacity_) + " bytes is full (" +
                    std::to_string(at + bytes) + " needed)");
  }
  void* p = base_ + at;
  offset_of_.emplace(p, at);
  return p;
}

void DeviceArena::release(const void* p) {
  const auto it = offset_of_.find(p);
  if (it == offset_of_.end()) return;
  live_.erase(it->second);
  offset_of_.erase(it);
}

ArenaScope::ArenaScope(DeviceArena& arena) : previous_(g_current) {
  PIPESIM_ASSERT(previous_ == nullptr);
  g_current = &arena;
}

ArenaScope::~ArenaScope() { g_current = previous_; }

}  // namespace pipesim
