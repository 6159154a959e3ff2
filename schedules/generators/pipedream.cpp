// The PipeDream family: asynchronous (flush-free) 1F1B, spec §10.1-§10.3.
//
// All three run ONE 1F1B over the whole run: T iterations of m micro-batches are chained
// as ids 0 .. N-1 (N = T*m) with no barrier between iterations, so the pipeline fills
// and drains once per run, not once per iteration. Stage s (device s):
//
//   w = min(p - s - 1, N)
//   warm-up    F(0) .. F(w-1)
//   steady     F(k+w) B(k)      for k = 0 .. N-w-1
//   drain      B(N-w) .. B(N-1)
//
// and the generators differ only in where OptSteps go and which weight version an op
// uses (the engine applies the WeightPolicy, sim/versions.hpp):
//
//   pipedream      OPT after every B; Stash: B(k) reuses F(k)'s version (§10.1)
//   async-1f1b     OPT after every B; Current: no stashing (§10.3)
//   pipedream-2bw  OPT after the B that completes batch t (B(t*m + m-1)); TwoBW: every op
//                  of batch t uses W^(t-1) (§10.2). --twobw-policy naive gives
//                  plain local accumulation instead (Current).
//
// p = 4, stage 0, pipedream (O = OPT):
//
//   F0 F1 F2 F3 B0 O F4 B1 O F5 B2 O ...      F(k+3) runs on w_k: 3 versions behind
//   stage 3:  F0 B0 O F1 B1 O ...             the last stage is never behind
//
// With one update per B, F(k) at stage s uses w_{k-(p-s-1)} and B(k) runs on w_k [derived],
// so stashing turns a mismatch of p-s-1 into a gradient delay of p-s-1 and keeps p-s
// versions alive (F(k) .. F(k+w) in flight on w_{k-w} .. w_k).
//
// Choices the spec leaves open:
//   * [unverified] PipeDream's NOAM = D admission is read as Megatron's warm-up p-s-1.
//   * A PipeDream "iteration" (schedule.iterations = T, microbatches = m) is bookkeeping
//     only: every micro-batch is its own minibatch with its own update, so one iteration
//     contains m OptSteps per stage.
//   * [reconstruction] 2BW binding: the engine binds W^(t-1) to batch t (sim/versions.hpp);
//     the order guarantees it exists when m >= p, which is required (spec: m >= d).
//   * [derived] 2BW "naive": batch t's first p-s-1 micro-batches are forwarded before the
//     update of batch t-1 and backwarded after it: a 1-step mismatch (p = m = 4, stage 0:
//     1,1,1,0 for every batch t >= 1).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "schedules/generators/generators.hpp"

namespace pipesim {
namespace {

// Forwards stage s runs before its first backward; in the steady state stage s holds
// w + 1 = p - s micro-batches in flight.
int async_warmup(int p, int s, int n) { return std::min(p - s - 1, n); }

Schedule async_shell(const char* name, const ScheduleParams& params, WeightPolicy policy) {
  Schedule s = plain_pipeline(name, params);
  s.weight_policy = policy;
  return s;
}

// Stage `stage`'s flush-free 1F1B over n micro-batches; `update_after(k)` says whether
// an OptStep follows B(k).
template <class UpdateAfter>
std::vector<Op> async_one_f_one_b(int p, int stage, int n, UpdateAfter update_after) {
  std::vector<Op> list;
  list.reserve(static_cast<std::size_t>(3) * static_cast<std::size_t>(n));
  auto backward = [&](int k) {
    list.push_back(make_op(OpKind::B, stage, k));
    if (update_after(k)) list.push_back(opt_step(stage));
  };
  const int w = async_warmup(p, stage, n);
  for (int k = 0; k < w; ++k) list.push_back(make_op(OpKind::F, stage, k));
  for (int k = 0; k + w < n; ++k) {
    list.push_back(make_op(OpKind::F, stage, k + w));
    backward(k);
  }
  for (int k = std::max(0, n - w); k < n; ++k) backward(k);
  return list;
}

// pipedream and async-1f1b: one update per backward, differing only in stashing.
Schedule make_per_microbatch_updates(const char* name, const ScheduleParams& params, WeightPolicy policy) {
  Schedule s = async_shell(name, params, policy);
  const int n = run_microbatches(name, params);
  for (int st = 0; st < params.p; ++st)
    s.ops[static_cast<std::size_t>(st)] = async_one_f_one_b(params.p, st, n, [](int) { return true; });
  return s;
}

}  // namespace

Schedule make_pipedream(const ScheduleParams& params) {
  return make_per_microbatch_updates("pipedream", params, WeightPolicy::Stash);
}

Schedule make_async_1f1b(const ScheduleParams& params) {
  return make_per_microbatch_updates("async-1f1b", params, WeightPolicy::Current);
}

Schedule make_pipedream_2bw(const ScheduleParams& params) {
  constexpr const char* kName = "pipedream-2bw";
  Schedule s = async_shell(kName, params, WeightPolicy::TwoBW);
  const int n = run_microbatches(kName, params);
  const int p = params.p;
  const int m = params.m;
  // W^(t-1) must exist when a stage first sees batch t: batch t-2's last backward has to
  // come before batch t's first forward in stage 0's order, which m >= p guarantees.
  require(m >= p, kName,
          "m (" + std::to_string(m) + ") must be at least p (" + std::to_string(p) +
              ") so that each stage has finished a batch before it binds the next version");
  if (params.text("twobw-policy") == "naive") s.weight_policy = WeightPolicy::Current;  // else double-buffer (generate() checked)
  for (int st = 0; st < p; ++st)
    s.ops[static_cast<std::size_t>(st)] = async_one_f_one_b(p, st, n, [m](int k) { return k % m == m - 1; });
  return s;
}

std::vector<GeneratorInfo> pipedream_generators() {
  const auto per_microbatch_updates = [](const ScheduleParams& q) { return 3.0 * q.p * q.m; };
  return {overlapping({"pipedream", "PipeDream: flush-free 1F1B, update after every backward, weight stashing",
                       &make_pipedream, 70, per_microbatch_updates}),
          overlapping({"pipedream-2bw", "PipeDream-2BW: flush-free 1F1B, update every m micro-batches, 2 versions",
           &make_pipedream_2bw, 80, [](const ScheduleParams& q) { return q.p * (2.0 * q.m + 1); },
           {{.flags = "--twobw-policy",
             .help = "PipeDream-2BW: double-buffer (batch t uses W^(t-1)) or naive (local accumulation)",
             .order = 60,
             .label = "policy",
             .default_text = "double-buffer",
             .choices = {"double-buffer", "naive"}}}}),
          overlapping({"async-1f1b", "async 1F1B: flush-free, update after every backward, no stashing",
                       &make_async_1f1b, 90, per_microbatch_updates})};
}

}  // namespace pipesim
