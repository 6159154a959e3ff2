#pragma once
// When a configuration that fits is too close to the GPU's memory to trust: the memory model
// (docs/cost-model.md) leaves out the CUDA context, NCCL's buffers and the allocator's
// fragmentation, so a fit with less than 5 % of the memory free may not hold on a real GPU.
// The tables say "tight" and a note says why (compare, simulate, the report, sweep).
#include <cstdint>

namespace pipesim {

inline constexpr double kTightFreeShare = 0.05;

constexpr bool tight_fit(std::int64_t peak, std::int64_t capacity) {
  return peak <= capacity && static_cast<double>(capacity - peak) < kTightFreeShare * static_cast<double>(capacity);
}

// Why a tight fit is marked, after "fits with " (under the tables, in the report's verdict).
inline constexpr const char* kTightFitNote =
    "less than 5 % of the GPU's memory free; the memory model leaves out the CUDA context, NCCL's buffers and "
    "the allocator's fragmentation (docs/cost-model.md), which may take that much: check on the GPU first, or "
    "pick a configuration with more room";

}  // namespace pipesim
