#pragma once
// What the kernels of device_ops.cu and ends_ops.cu share: the launch shape (256 threads a
// block, grid-stride loops for elementwise kernels, one warp per row for row reductions)
// and the warp reductions. CUDA sources only.
#include <algorithm>
#include <cstdint>

namespace pipesim::cuda_launch {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / 32;

// Blocks for a grid-stride loop over `count` elements (at most 2^20; the loop covers the rest).
inline unsigned elementwise_blocks(std::int64_t count) {
  const std::int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>(blocks, 1 << 20)));
}
// Blocks for one warp per row.
inline unsigned row_blocks(std::int64_t rows) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, (rows + kWarpsPerBlock - 1) / kWarpsPerBlock));
}

__device__ inline std::int64_t global_thread() { return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline std::int64_t grid_threads() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

__device__ inline float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ inline float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

}  // namespace pipesim::cuda_launch
