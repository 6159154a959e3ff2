// ZB-V (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, §6; spec §12.3), the
// handcrafted order PyTorch's ScheduleZBVZeroBubble generates. Placement as DualPipeV: p
// ranks hold 2p stages in a V, rank r holding stage r (chunk 0) and 2p-1-r (chunk 1), so
// each op costs half a full stage (chunks_per_device() = 2).
//
// With n = max(m, 2p-1) micro-batches (ops of ids >= m are then left out), rank r runs,
// F0/I0/W0 on chunk 0, F1/I1/W1 on chunk 1, each chunk's ops in micro-batch order:
//
//   warm-up    (2(p-r)-1) x F0 ; r x [F1 F0] ; (p-r) x [F1 I1 W1]
//   steady     while F0 < n or F1 < F0:  [F0 if F0 < n] I0 W0 F1 I1 W1
//   cool-down  r x [I0 I1] ; (p-r) x [I0 W0] ; the W1's left ; the W0's left
//   OPT(chunk 0) OPT(chunk 1)
//
// With F = I = W, zero bubble in the steady state and p micro-batches' activations
// (2p chunk activations) at the peak on rank 0, as 1F1B.
#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "schedules/generators/generators.hpp"

namespace pipesim {

Schedule make_zb_v(const ScheduleParams& params) {
  constexpr const char* kName = "zb-v";
  Schedule s = v_pipeline(kName, params);
  const int p = params.p;
  const int m = params.m;

  const int n = std::max(m, 2 * p - 1);
  for (int r = 0; r < p; ++r) {
    auto& list = s.ops[static_cast<std::size_t>(r)];
    list.reserve(static_cast<std::size_t>(params.iterations) * static_cast<std::size_t>(6 * m + 2));
    const int chunk0 = r;
    const int chunk1 = 2 * p - 1 - r;
    for (int t = 0; t < params.iterations; ++t) {
      const int base = t * m;
      int f0 = 0, f1 = 0, i0 = 0, i1 = 0;
      const auto add = [&](OpKind kind, int stage, int k) {
        if (k < m) list.push_back(make_op(kind, stage, base + k));  // ids past m only fill the pattern
      };
      for (int k = 0; k < 2 * (p - r) - 1; ++k) add(OpKind::F, chunk0, f0++);
      for (int k = 0; k < r; ++k) {
        add(OpKind::F, chunk1, f1++);
        add(OpKind::F, chunk0, f0++);
      }
      for (int k = 0; k < p - r; ++k) {
        add(OpKind::F, chunk1, f1++);
        add(OpKind::I, chunk1, i1);
        add(OpKind::W, chunk1, i1++);
      }
      while (f1 < f0 || f0 < n) {
        if (f0 < n) add(OpKind::F, chunk0, f0++);
        add(OpKind::I, chunk0, i0);
        add(OpKind::W, chunk0, i0++);
        add(OpKind::F, chunk1, f1++);
        add(OpKind::I, chunk1, i1);
        add(OpKind::W, chunk1, i1++);
      }
      int w0 = i0, w1 = i1;
      for (int k = 0; k < r; ++k) {
        add(OpKind::I, chunk0, i0++);
        add(OpKind::I, chunk1, i1++);
      }
      for (int k = 0; k < p - r; ++k) {
        add(OpKind::I, chunk0, i0++);
        add(OpKind::W, chunk0, w0++);
      }
      while (w1 < i1) add(OpKind::W, chunk1, w1++);
      while (w0 < i0) add(OpKind::W, chunk0, w0++);
      PIPESIM_ASSERT(f0 == n && f1 == n && i0 == n && i1 == n && w0 == n && w1 == n);
      list.push_back(opt_step(chunk0));
      list.push_back(opt_step(chunk1));
    }
  }
  return s;
}

std::vector<GeneratorInfo> zbv_generators() {
  return {overlapping({"zb-v", "ZB-V: zero bubble on 2p stages in a V, 1F1B memory (PyTorch's order)", &make_zb_v, 160,
                       [](const ScheduleParams& q) { return q.p * (6.0 * q.m + 2); }})};
}

}  // namespace pipesim
