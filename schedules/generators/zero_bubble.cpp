// Zero Bubble ZB-H1 / ZB-H2 (Qi et al., ICLR 2024), spec §12.1, following the handcrafted
// schedules of sail-sg/zero-bubble-pipeline-parallelism (branch arxiv, efficiency.py).
//
// The backward is split into I (input gradient, "B" in the paper, on the critical path)
// and W (weight gradient, off it). With c = 1 (ZB-H1) or c = 2 (ZB-H2), rank r runs per
// iteration t (micro-batch ids t*m .. t*m+m-1; F, I and W each in micro-batch order):
//
//   warm = (p - r - 1) * c
//   warm x F
//   for i in 0..m-1:  [F if warm + i < m]  I  [W if warm + i >= (p-1)*c]
//   ((p-1)*c - warm) x W                     (drain; = r*c)
//   OPT(r)
//
// ZB-H1, p = 4, m = 8 (rank r's first W follows its I(r*c)):
//
//   r0: F0 F1 F2 F3 I0 W0 F4 I1 W1 ...          like 1F1B with B = I W
//   r3: F0 I0 F1 I1 F2 I2 F3 I3 W0 F4 I4 W1 ... W4 W5 W6 W7
//
// A rank holds a micro-batch's activations from its F to its W: at most p (ZB-H1) or
// 2p - 1 (ZB-H2) on every rank. The rule needs m >= 2p (spec §12.1), checked for both.
#include <string>

#include "core/error.hpp"
#include "schedules/generators/generators.hpp"

namespace pipesim {
namespace {

// Forwards rank r runs before its first I.
int zero_bubble_warmup(int p, int r, int c) { return (p - r - 1) * c; }
// W's left after the main loop (the drain); the main loop runs m minus this many W's.
int zero_bubble_drain(int p, int r, int c) { return (p - 1) * c - zero_bubble_warmup(p, r, c); }

Schedule make_zero_bubble(const ScheduleParams& params, const char* name, int c) {
  Schedule s = plain_pipeline(name, params);
  const int p = params.p;
  const int m = params.m;
  require(m >= 2 * p, name,
          "m (" + std::to_string(m) + ") must be at least 2p = " + std::to_string(2 * p) + " (p = " +
              std::to_string(p) + ")");

  for (int r = 0; r < p; ++r) {
    auto& list = s.ops[static_cast<std::size_t>(r)];
    list.reserve(static_cast<std::size_t>(params.iterations) * static_cast<std::size_t>(3 * m + 1));
    const int warm = zero_bubble_warmup(p, r, c);
    const int drain = zero_bubble_drain(p, r, c);
    for (int t = 0; t < params.iterations; ++t) {
      const int base = t * m;
      int next_f = 0;
      int next_w = 0;  // W's run FIFO: the oldest micro-batch whose I is done
      for (; next_f < warm; ++next_f) list.push_back(make_op(OpKind::F, r, base + next_f));
      for (int i = 0; i < m; ++i) {
        if (warm + i < m) list.push_back(make_op(OpKind::F, r, base + next_f++));
        list.push_back(make_op(OpKind::I, r, base + i));
        if (warm + i >= (p - 1) * c) list.push_back(make_op(OpKind::W, r, base + next_w++));
      }
      for (int i = 0; i < drain; ++i) list.push_back(make_op(OpKind::W, r, base + next_w++));
      PIPESIM_ASSERT(next_f == m && next_w == m);
      list.push_back(opt_step(r));
    }
  }
  return s;
}

}  // namespace

Schedule make_zb_h1(const ScheduleParams& params) { return make_zero_bubble(params, "zb-h1", 1); }
Schedule make_zb_h2(const ScheduleParams& params) { return make_zero_bubble(params, "zb-h2", 2); }

std::vector<GeneratorInfo> zero_bubble_generators() {
  const auto ops = [](const ScheduleParams& q) { return q.p * (3.0 * q.m + 1); };
  return {{"zb-h1", "Zero Bubble H1: split backward I/W, 1F1B memory", &make_zb_h1, 40, ops},
          overlapping({"zb-h2", "Zero Bubble H2: split backward I/W, 2p-1 activations", &make_zb_h2, 50, ops})};
}

}  // namespace pipesim
