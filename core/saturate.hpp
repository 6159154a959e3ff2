#pragma once
// Counts and sizes estimated in doubles (so absurd inputs cannot overflow), back to an
// integer: values at or above 2^64 become UINT64_MAX, negative ones 0.
#include <cstdint>
#include <limits>

namespace pipesim {

inline std::uint64_t saturate_u64(double v) {
  if (!(v > 0)) return 0;
  if (!(v < 18446744073709551616.0)) return std::numeric_limits<std::uint64_t>::max();  // 2^64
  return static_cast<std::uint64_t>(v);
}

}  // namespace pipesim
