// GEMS-MAST (Jain et al., "GEMS: GPU-Enabled Memory-Aware Model-Parallelism System for
// Distributed DNN Training", SC 2020), spec §11: two model replicas in opposite
// directions, at most one active micro-batch per replica, synchronous.
//
// Placement (as Chimera with f = 1, spec §7.2): replica 0 puts stage s on worker s,
// replica 1 on worker p-1-s, so every worker holds two stage replicas (weights 2 M_θ).
// The replicas take turns: micro-batch j of an iteration (id t*m + j) belongs to replica
// j mod 2 and runs its forward through every stage, then its backward back; the next
// micro-batch (the other replica) enters at the other end when that backward has passed.
// Every worker thus runs, per iteration t:
//
//   F(0) B(0) F(1) B(1) ... F(m-1) B(m-1)   GradSync x2   OptStep x2
//
// at its stage of replica j mod 2, holding one micro-batch's activations at a time (M_a).
// [reconstruction] The spec (from Chimera's Table 2) gives no op order; this is the order
// "at most one active micro-batch per replica" with M_a allows. With t_F = t_B = t and
// free links an iteration takes ((m/2 - 1)(2p + 2) + 3p + 1) t: each pair of micro-batches
// (one per replica) (p+1)(t_F+t_B), the bubble tending to (p-1)/(p+1). Chimera's Table 2
// states ≈(D-1)/(D+½), which this order does not reproduce (docs/schedules.md).
//
// The gradients of stage s's two replicas (workers s and p-1-s) are reduced by one
// GradSync after the last backward, then each replica steps; both workers of a pair order
// their two GradSyncs by stage, so a blocking collective cannot cross. p must be even
// (with odd p the middle worker would hold both replicas of one stage) and m even (the
// replicas take the same number of micro-batches).
#include <algorithm>

#include "schedules/generators/generators.hpp"

namespace pipesim {
namespace {

Schedule make_gems(const ScheduleParams& params) {
  Schedule s = plain_pipeline("gems", params);
  const int p = params.p;
  const int m = params.m;
  s.num_pipelines = 2;
  s.placement.emplace_back(static_cast<std::size_t>(p));
  for (int st = 0; st < p; ++st) s.placement[1][static_cast<std::size_t>(st)] = p - 1 - st;

  for (int w = 0; w < p; ++w) {
    const int stage_of[2] = {w, p - 1 - w};  // worker w's stage in replica 0 and 1
    const int first = std::min(w, p - 1 - w) == w ? 0 : 1;  // the replica whose stage here is the lower
    auto& list = s.ops[static_cast<std::size_t>(w)];
    list.reserve(static_cast<std::size_t>(params.iterations) * static_cast<std::size_t>(2 * m + 4));
    for (int t = 0; t < params.iterations; ++t) {
      for (int j = 0; j < m; ++j) {
        const int replica = j % 2;
        list.push_back(make_op(OpKind::F, stage_of[replica], t * m + j, replica));
        list.push_back(make_op(OpKind::B, stage_of[replica], t * m + j, replica));
      }
      for (int r : {first, 1 - first}) list.push_back(grad_sync(stage_of[r], r));
      for (int r : {first, 1 - first}) list.push_back(opt_step(stage_of[r], r));
    }
  }
  return s;
}

bool positive_or_even(int n) { return n <= 0 || n % 2 == 0; }  // non-positive: plain_pipeline says so

}  // namespace

std::vector<GeneratorInfo> gems_generators() {
  return {{"gems", "GEMS-MAST: two replicas in opposite directions, one micro-batch in flight each (SC 2020)",
           &make_gems, 190, [](const ScheduleParams& q) { return q.p * (2.0 * q.m + 4); }, {},
           {{"p must be even",
             [](const ScheduleParams& q) { return positive_or_even(q.p); }},
            {"m must be even", [](const ScheduleParams& q) { return positive_or_even(q.m); }}}}};
}

}  // namespace pipesim
