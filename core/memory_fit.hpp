#pragma once
// When a configuration that fits is too close to the GPU's memory to trust: the memory model
// (docs/cost-model.md) leaves out the CUDA context, NCCL's buffers and the allocator's
// fragmentation, so a fit with less than 5 % of the memory free may not hold on a real GPU.
// The tables say "tight" and a note says why (compare, simulate, the report, sweep).
#include <cstddef>
#include <cstdint>
#include <string>

namespace pipesim {

inline constexpr double kTightFreeShare = 0.05;

constexpr bool tight_fit(std::int64_t peak, std::int64_t capacity) {
  return peak <= capacity && static_cast<double>(capacity - peak) < kTightFreeShare * static_cast<double>(capacity);
}

// What the tables' fits column says of a configuration that fits.
constexpr const char* fits_label(std::int64_t peak, std::int64_t capacity) {
  return tight_fit(peak, capacity) ? "fits, tight" : "fits";
}

// Why a tight fit is marked, after "fits with " (under the tables, in the report's verdict).
inline constexpr const char* kTightFitNote =
    "less than 5 % of the GPU's memory free; the memory model leaves out the CUDA context, NCCL's buffers and "
    "the allocator's fragmentation (docs/cost-model.md), which may take that much: check on the GPU first, or "
    "pick a configuration with more room";

// The note under a table that marks `count` tight fits, named `names` ("zb-v, v-half").
inline std::string tight_fit_note(const std::string& names, std::size_t count) {
  return "note: tight: " + names + (count > 1 ? " fit with " : " fits with ") + kTightFitNote + ".";
}

}  // namespace pipesim
