// Looped BFS (Lamy-Poirier, "Breadth-First Pipeline Parallelism", arXiv 2211.05953), as
// PyTorch's ScheduleLoopedBFS generates it. Placement as interleaved: p*v stages, stage s on
// rank s % p (rank r holds stages r, r+p, ..., r+(v-1)p).
//
// Rank r runs every micro-batch through one chunk before the next (breadth first):
//
//   for c in 0..v-1:      F(c*p + r, k) for k = 0..m-1
//   for c in v-1..0:      B(c*p + r, k) for k = m-1..0      (backwards in reverse order)
//   OPT per chunk
//
// p = 2, v = 2, m = 2:   r0: 0F0 0F1 2F0 2F1 2B1 2B0 0B1 0B0 0OPT 2OPT
//
// Like GPipe it holds every micro-batch's activations of every chunk: m*v per rank.
#include "schedules/generators/generators.hpp"

namespace pipesim {

Schedule make_looped_bfs(const ScheduleParams& params) {
  constexpr const char* kName = "looped-bfs";
  require_positive(kName, "v", params.v);
  Schedule s = plain_pipeline(kName, params, params.v);
  const int p = params.p;
  const int m = params.m;
  const int v = params.v;
  for (int r = 0; r < p; ++r) {
    auto& list = s.ops[static_cast<std::size_t>(r)];
    list.reserve(static_cast<std::size_t>(params.iterations) * static_cast<std::size_t>(2 * m * v + v));
    for (int t = 0; t < params.iterations; ++t) {
      const int base = t * m;
      for (int c = 0; c < v; ++c)
        for (int k = 0; k < m; ++k) list.push_back(make_op(OpKind::F, c * p + r, base + k));
      for (int c = v - 1; c >= 0; --c)
        for (int k = m - 1; k >= 0; --k) list.push_back(make_op(OpKind::B, c * p + r, base + k));
      for (int c = 0; c < v; ++c) list.push_back(opt_step(c * p + r));
    }
  }
  return s;
}

std::vector<GeneratorInfo> looped_bfs_generators() {
  return {{"looped-bfs", "Looped BFS: v chunks per device, each chunk's micro-batches all at once (PyTorch)",
           &make_looped_bfs, 140, [](const ScheduleParams& q) { return 1.0 * q.p * q.v * (2.0 * q.m + 1); }, {chunks_setting()}}};
}

}  // namespace pipesim
