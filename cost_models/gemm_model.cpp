#include "cost_models/gemm_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/error.hpp"

namespace pipesim {
namespace {

bool aligned(double elements, int element_bytes) {
  const double bytes = elements * element_bytes;
  return std::fmod(bytes, 16.0) == 0;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

double smooth_ceil(double x, double q) {
  PIPESIM_ASSERT(x >= 0 && q > 0 && q <= 1);
  const double whole = std::floor(x);
  return whole + std::min(1.0, (x - whole) / q);
}

double gemm_efficiency(const GemmShape& s, const Efficiency& e, int sms, int element_bytes) {
  PIPESIM_ASSERT(s.m > 0 && s.n > 0 && s.k > 0 && s.batch > 0);
  const double q = e.wave_smoothing;
  const double tiles = smooth_ceil(s.m / e.tile_m, q) * smooth_ceil(s.n / e.tile_n, q) * s.batch;
  // Without an SM count every tile runs in parallel at the per-tile rate: no wave losses.
  const double slots = sms > 0 ? smooth_ceil(tiles / sms, q) * sms : tiles;
  const double work = s.m * s.n * s.k * s.batch;
  const double capacity = slots * e.tile_m * e.tile_n * (s.k + e.gemm_k_overhead);
  double eff = e.gemm * work / capacity;
  if (!aligned(s.n, element_bytes) || !aligned(s.k, element_bytes)) eff *= e.misaligned;
  PIPESIM_ASSERT(eff > 0 && eff <= e.gemm * (1 + 1e-12));
  return eff;
}

void check_efficiency(const Efficiency& e, const std::string& who) {
  auto fraction = [&](const char* name, double v) {
    if (!(v > 0 && v <= 1)) throw InputError(who + ": efficiency." + name + " must lie in (0, 1], got " + number(v));
  };
  fraction("gemm", e.gemm);
  fraction("attention", e.attention);
  fraction("memory", e.memory);
  fraction("network", e.network);
  fraction("misaligned", e.misaligned);
  fraction("wave_smoothing", e.wave_smoothing);
  if (!(e.gemm_k_overhead >= 0 && e.gemm_k_overhead <= 1e6))
    throw InputError(who + ": efficiency.gemm_k_overhead must lie in [0, 1e6] elements, got " + number(e.gemm_k_overhead));
  if (e.tile_m < 1 || e.tile_n < 1 || e.tile_m > 4096 || e.tile_n > 4096)
    throw InputError(who + ": efficiency.tile_m and tile_n must lie in 1..4096, got " + std::to_string(e.tile_m) + " x " +
                     std::to_string(e.tile_n));
}

}  // namespace pipesim
