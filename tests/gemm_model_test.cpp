// cost_models/gemm_model: GEMM efficiency as a function of shape — bounded by the ceiling,
// continuous, the closed forms of tile padding, wave quantisation and the tile overhead.
#include "cost_models/gemm_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "input_error.hpp"

namespace pipesim {
namespace {

Efficiency a100() {
  Efficiency e;  // the A100 catalog values: tile 128 x 256, K0 370, q 0.5, ceiling 0.786
  return e;
}

TEST(SmoothCeil, ContinuousAndAboveItsArgument) {
  for (double q : {0.1, 0.5, 1.0}) {
    for (double x = 0; x < 6; x += 0.013) {
      EXPECT_GE(smooth_ceil(x, q), x);
      EXPECT_LE(smooth_ceil(x, q), std::ceil(x) + 1e-12);
    }
    for (int n = 1; n < 6; ++n) {  // no step at the integers, where the hard ceiling jumps
      EXPECT_NEAR(smooth_ceil(n - 1e-9, q), n, 1e-6);
      EXPECT_NEAR(smooth_ceil(n + 1e-9, q), n, 1e-6 / q);
    }
  }
  EXPECT_DOUBLE_EQ(smooth_ceil(2.25, 1.0), 2.25);  // q = 1: no quantisation
  EXPECT_DOUBLE_EQ(smooth_ceil(2.25, 0.5), 2.5);   // a quarter-full wave costs half a wave
  EXPECT_DOUBLE_EQ(smooth_ceil(2.75, 0.5), 3.0);   // past half full: a whole one
}

// No shape beats the ceiling: random shapes, aligned or not, any batch.
TEST(GemmEfficiency, BoundedByTheCeiling) {
  const Efficiency e = a100();
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dim(1, 70000);
  for (int i = 0; i < 20000; ++i) {
    const GemmShape s{static_cast<double>(dim(rng)), static_cast<double>(dim(rng)), static_cast<double>(dim(rng)),
                      static_cast<double>(1 + i % 7)};
    const double eff = gemm_efficiency(s, e, 108, 2);
    EXPECT_GT(eff, 0);
    EXPECT_LE(eff, e.gemm);
  }
}

// Continuous in M, N and K: along aligned shapes (multiples of 8 bf16 elements) a step
// changes the efficiency by at most 2/q times the step's share of the shape (the smooth
// ceilings of tiles and waves rise with slope 1/q), and the real-valued curve has no jump
// anywhere (at tile and wave boundaries included).
TEST(GemmEfficiency, ContinuousInTheShape) {
  const Efficiency e = a100();
  double prev = gemm_efficiency({8, 4096, 4096}, e, 108, 2);
  for (double m = 16; m <= 65536; m += 8) {
    const double eff = gemm_efficiency({m, 4096, 4096}, e, 108, 2);
    EXPECT_LT(std::abs(eff - prev), 2 / e.wave_smoothing * 8 / m) << "M " << m;
    prev = eff;
  }
  prev = gemm_efficiency({4096, 4096, 8}, e, 108, 2);
  for (double k = 16; k <= 65536; k += 8) {
    const double eff = gemm_efficiency({4096, 4096, k}, e, 108, 2);
    EXPECT_LT(std::abs(eff - prev), 2 / e.wave_smoothing * 8 / k) << "K " << k;
    prev = eff;
  }
  // Across the edge of a tile (N = 256) and of a wave (108 tiles: M = 108 x 128), from both
  // sides: the limits agree. Alignment is the one deliberate step, so 16-byte-aligned
  // neighbours are compared on a unit that keeps every row aligned (fp32: 4 elements).
  for (const GemmShape& at : {GemmShape{2048, 256, 4096, 1}, GemmShape{108 * 128, 256, 4096, 1}}) {
    const double below = gemm_efficiency({at.m - 1e-7, at.n - 1e-7, at.k}, e, 108, 1);
    const double above = gemm_efficiency({at.m + 1e-7, at.n + 1e-7, at.k}, e, 108, 1);
    EXPECT_NEAR(below, above, 1e-5);
  }
}

TEST(GemmEfficiency, ClosedForms) {
  Efficiency e = a100();
  // Many full waves of full tiles: only the tile overhead remains, K / (K + K0).
  const GemmShape big{128 * 108 * 4, 256 * 10, 8192, 1};
  EXPECT_DOUBLE_EQ(gemm_efficiency(big, e, 108, 2), e.gemm * 8192 / (8192 + 370));
  // N = 128 is half a tile, and at q = 0.5 a half-full tile costs a whole one: half the rate.
  EXPECT_DOUBLE_EQ(gemm_efficiency({128 * 108 * 4, 128, 8192, 1}, e, 108, 2), 0.5 * gemm_efficiency(big, e, 108, 2));
  // 1.25 waves of tiles at q = 0.5 cost 1.5 waves: 1.25 / 1.5 of the work rate.
  const GemmShape waves{128 * 135, 256, 8192, 1};  // 135 tiles on 108 SMs
  EXPECT_NEAR(gemm_efficiency(waves, e, 108, 2), e.gemm * 8192 / (8192 + 370) * 1.25 / 1.5, 1e-15);
  // Without an SM count there are no waves.
  EXPECT_DOUBLE_EQ(gemm_efficiency(waves, e, 0, 2), e.gemm * 8192 / (8192 + 370));
  // Batched products fill waves together: 108 single-tile products are one full wave.
  EXPECT_DOUBLE_EQ(gemm_efficiency({128, 256, 8192, 108}, e, 108, 2), e.gemm * 8192 / (8192 + 370));
  // A row of N or K elements that is not a multiple of 16 bytes: x misaligned.
  const double aligned = gemm_efficiency({4096, 50304, 4096, 1}, e, 108, 2);
  const double odd = gemm_efficiency({4096, 50257, 4096, 1}, e, 108, 2);
  EXPECT_NEAR(odd / aligned, e.misaligned * (50257.0 / 50304), 2e-3);
  EXPECT_LT(gemm_efficiency({4096, 4096, 4100, 1}, e, 108, 2), 0.34 * e.gemm);
  EXPECT_GT(gemm_efficiency({4096, 4096, 4100, 1}, e, 108, 4), 0.8 * e.gemm);  // fp32 rows of 4100 are aligned
}

TEST(GemmEfficiency, CheckNamesTheField) {
  Efficiency e = a100();
  e.wave_smoothing = 0;
  EXPECT_EQ(error_of([&] { check_efficiency(e, "gpus.json: /gpus/0/efficiency"); }),
            "gpus.json: /gpus/0/efficiency: efficiency.wave_smoothing must lie in (0, 1], got 0");
  e = a100();
  e.misaligned = 2;
  EXPECT_EQ(error_of([&] { check_efficiency(e, "x"); }), "x: efficiency.misaligned must lie in (0, 1], got 2");
}

}  // namespace
}  // namespace pipesim
