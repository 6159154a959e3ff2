#pragma once
// GEMM efficiency as a function of shape: the share of a GPU's dense peak one matrix
// product C[M x N] = A[M x K] · B[K x N] (batch of them) reaches. docs/cost-model.md,
// "GEMM efficiency as a function of shape", derives it:
//
//   A GEMM kernel cuts C into tiles of tile_m x tile_n; each SM computes one tile at a time,
//   in about tile_m·tile_n·(K + K0) steps (K0: the tile's prologue and epilogue). The tiles
//   run in waves of `sms`; the last wave, and a tile row or column hanging over the edge of C,
//   cost as much as full ones.
//
//   efficiency = gemm · (M·N·K·batch) / (waves · sms · tile_m · tile_n · (K + K0)) · alignment
//   tiles      = ⌈M / tile_m⌉_q · ⌈N / tile_n⌉_q · batch,   waves = ⌈tiles / sms⌉_q
//
// ⌈x⌉_q (smooth_ceil) is floor(x) + min(1, frac(x)/q): a partial wave or tile filled to a
// fraction f costs min(1, f/q) of a full one. q = 1 is no quantisation; q -> 0 the hard
// ceiling. Libraries pick smaller tiles or split K for a nearly empty last wave (cuBLAS
// heuristics, stream-K), so a q between the two is what is observed, and it keeps the curve
// continuous in M, N, K. The curve is bounded by `gemm` <= 1: no shape beats the ceiling.
//
// A GEMM whose N or K is not a multiple of 16 bytes (8 bf16 elements) cannot use the
// vectorised tensor-core kernels: x `misaligned` (a fitted ratio; 0.33 on H200 with cuBLAS
// 13.1, docs/validation/analytical.md). That factor is the one deliberate step of the curve.
#include "cost_models/hardware_spec.hpp"

namespace pipesim {

struct GemmShape {
  double m = 0, n = 0, k = 0;  // C[m x n] += A[m x k] · B[k x n]
  double batch = 1;            // independent products of that shape (batched attention)
  double flops() const { return 2 * m * n * k * batch; }
};

// floor(x) + min(1, frac(x) / q) for x >= 0 and q in (0, 1]: continuous, >= x, = x at q = 1.
double smooth_ceil(double x, double q);

// Share of the dense peak, in (0, e.gemm]. `sms` <= 0 turns wave quantisation off;
// `element_bytes` (1, 2 or 4) sets the alignment unit.
double gemm_efficiency(const GemmShape& shape, const Efficiency& e, int sms, int element_bytes);

// InputError naming `who` and the field unless every GEMM and kernel parameter of `e` is
// in range (efficiencies in (0, 1], tiles >= 1, K0 >= 0, q in (0, 1]).
void check_efficiency(const Efficiency& e, const std::string& who);

}  // namespace pipesim
