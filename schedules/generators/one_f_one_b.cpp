// 1F1B with flush (PipeDream-Flush / DAPPLE), spec §5, following Megatron-core's
// forward_backward_pipelining_without_interleaving.
//
// Rank r holds stage r and runs, per iteration t (micro-batch ids t*m .. t*m+m-1):
//
//   warm = min(p - r - 1, m)
//   warm-up    F(0) .. F(warm-1)
//   steady     (m - warm) x [ F(warm+i) B(i) ]
//   cool-down  B(m-warm) .. B(m-1)
//   flush      OPT(r)
//
// p = 4, m = 8 (time ->, one column per slot with t_F = t_B):
//
//   r0: F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7
//   r3:          F0 B0 F1 B1 F2 B2 ...
//
// so rank r holds at most min(p - r, m) micro-batches' activations.
#include <algorithm>

#include "schedules/generators/generators.hpp"

namespace pipesim {
namespace {

// Forwards rank r runs before its first backward (Megatron's num_warmup_microbatches).
int one_f_one_b_warmup(int p, int r, int m) { return std::min(p - r - 1, m); }

}  // namespace

Schedule make_1f1b(const ScheduleParams& params) {
  Schedule s = plain_pipeline("1f1b", params);
  const int p = params.p;
  const int m = params.m;

  for (int r = 0; r < p; ++r) {
    auto& list = s.ops[static_cast<std::size_t>(r)];
    list.reserve(static_cast<std::size_t>(params.iterations) * static_cast<std::size_t>(2 * m + 1));
    const int warm = one_f_one_b_warmup(p, r, m);
    for (int t = 0; t < params.iterations; ++t) {
      const int base = t * m;
      for (int k = 0; k < warm; ++k) list.push_back(make_op(OpKind::F, r, base + k));
      for (int i = 0; i < m - warm; ++i) {
        list.push_back(make_op(OpKind::F, r, base + warm + i));
        list.push_back(make_op(OpKind::B, r, base + i));
      }
      for (int i = 0; i < warm; ++i) list.push_back(make_op(OpKind::B, r, base + m - warm + i));
      list.push_back(opt_step(r));
    }
  }
  return s;
}

std::vector<GeneratorInfo> one_f_one_b_generators() {
  return {{"1f1b", "1F1B with flush (PipeDream-Flush / DAPPLE)", &make_1f1b, 20,
           [](const ScheduleParams& q) { return q.p * (2.0 * q.m + 1); }}};
}

}  // namespace pipesim
