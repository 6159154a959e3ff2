// GPipe (spec §4): every forward of the iteration, then every backward, then the flush.
//
// Rank r holds stage r. Per iteration t (micro-batch ids t*m .. t*m+m-1):
//
//   rank r:  F(0) F(1) ... F(m-1)  B(0) B(1) ... B(m-1)  OPT(r)
//
// Backward order: FIFO (k = 0..m-1), as the Chimera code does. The GPipe paper's figure
// draws the reverse order; the spec notes the order does not change the makespan
// ((m+p-1)(t_F+t_B) either way), only which activations are freed first.
// The backward is unsplit (OpKind::B). No GradSync: one pipeline, no replicas.
#include "schedules/generators/generators.hpp"

namespace pipesim {

Schedule make_gpipe(const ScheduleParams& params) {
  Schedule s = plain_pipeline("gpipe", params);
  const int p = params.p;
  const int m = params.m;

  for (int r = 0; r < p; ++r) {
    auto& list = s.ops[static_cast<std::size_t>(r)];
    list.reserve(static_cast<std::size_t>(params.iterations) * static_cast<std::size_t>(2 * m + 1));
    for (int t = 0; t < params.iterations; ++t) {
      const int base = t * m;
      for (int k = 0; k < m; ++k) list.push_back(make_op(OpKind::F, r, base + k));
      for (int k = 0; k < m; ++k) list.push_back(make_op(OpKind::B, r, base + k));  // FIFO
      list.push_back(opt_step(r));
    }
  }
  return s;
}

std::vector<GeneratorInfo> gpipe_generators() {
  return {{"gpipe", "GPipe: all forwards, then all backwards, flush", &make_gpipe, 10,
           [](const ScheduleParams& q) { return q.p * (2.0 * q.m + 1); }}};
}

}  // namespace pipesim
