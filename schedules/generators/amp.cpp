// AMP / AMPNet on a linear pipeline (Gaunt et al., arXiv 1705.09786), spec §9, with the
// parameters of fairscale's AMPnetPipe: max_active_keys (mak) and min_update_frequency
// (muf, fairscale's min_update_interval).
//
// One flush-free run over N = T*m keys (micro-batches 0 .. N-1, no barrier between
// iterations). F and B use the stage's current weights (WeightPolicy::Current, a single
// copy), and each stage runs a local OptStep after every muf-th backward it has seen
// over the run.
//
// Order [reconstruction]. A key is "active" from its injection until its backward has
// finished at stage 0 (spec §16 leaves open whether it ends at the loss; we take "left
// every node"). Stage 0 injects only while fewer than mak keys are active, and runs a
// returning backward before injecting, so stage 0 is 1F1B with warm-up mak-1. The other
// stages follow the contention-free periodic timing of that injection with equal op
// times: keys travel in groups of mak, one group per round trip of 2p op slots. Key
// j = q*mak + i gets slot u = q*p + i, and at stage s (w = p - s - 1) its ops start at
//
//   F(j): s + 2u          B(j): s + 2(u + w) + 1        (units of t_F = t_B)
//
// F starts have the parity of s and B starts the other parity, so no two ops ever compete
// for a stage: a greedy event-driven AMPNet in this state makes the same choices. Each
// stage's list is its ops sorted by these start times. p = 4, mak = 2 (O = OPT, muf = 1):
//
//   s0: F0 F1 B0 O F2 B1 O F3 B2 O B3 O          1F1B with warm-up mak-1 = 1
//   s1: F0 F1 B0 O B1 O F2 F3 B2 O B3 O          the keys travel as a pair
//   s2: F0 F1 B0 O B1 O F2 F3 B2 O B3 O
//   s3: F0 B0 O F1 B1 O F2 B2 O F3 B3 O
//
// With mak = p every slot holds a key and the rule is exactly fairscale's 1F1B (warm-up
// p-s-1, then F/B pairs). A literal greedy replay from an empty pipeline is NOT used: it
// injects keys back to back, they collide downstream, and its warm-up differs from
// fairscale's 1F1B even at mak = p. mak > p is rejected: a linear 1F1B pipeline never has
// more than p keys active, so a larger bound could only queue keys at stage 0.
//
// Consequences [derived], zero-cost links and a free optimizer:
//   makespan = (u_last + p)(t_F + t_B),  u_last = p*floor((N-1)/mak) + (N-1) mod mak,
//   which is (N + p - 1)(t_F + t_B) for mak = p: one fill and one drain per run.
//   Mismatch of key j at stage s = floor((c + b)/muf), c = the stage's accumulated
//   gradients when F(j) runs (0 <= c < muf), b = backwards between F(j) and B(j); b <= mak-1,
//   so mismatch <= ceil((mak-1)/muf) (spec §9); b = p-s-1 in the mak = p steady state.
//
// Updates are counted over the run, not per iteration. If N is not a multiple of muf, the
// leftover gradients get one final OptStep after the last backward so every gradient is
// applied (fairscale would leave them unapplied).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "schedules/generators/generators.hpp"

namespace pipesim {
namespace {

// Slot of key j: groups of mak keys, one group per p slots (one round trip).
std::int64_t amp_slot(int j, int mak, int p) {
  return static_cast<std::int64_t>(j / mak) * p + j % mak;
}

// Stage `stage`'s ops: F and B streams merged by their start times (above, without the
// common offset s), with an OptStep after every muf-th backward and after the last one.
std::vector<Op> amp_stage_ops(int p, int stage, int n, int mak, int muf) {
  const std::int64_t w = p - stage - 1;
  std::vector<Op> list;
  list.reserve(static_cast<std::size_t>(2) * static_cast<std::size_t>(n) +
               static_cast<std::size_t>(n / muf + 1));
  int next_f = 0, next_b = 0, accumulated = 0;
  while (next_b < n) {
    const bool forward = next_f < n && 2 * amp_slot(next_f, mak, p) < 2 * (amp_slot(next_b, mak, p) + w) + 1;
    if (forward) {
      list.push_back(make_op(OpKind::F, stage, next_f++));
      continue;
    }
    list.push_back(make_op(OpKind::B, stage, next_b++));
    if (++accumulated == muf || next_b == n) {
      list.push_back(opt_step(stage));
      accumulated = 0;
    }
  }
  return list;
}

}  // namespace

Schedule make_amp(const ScheduleParams& params) {
  constexpr const char* kName = "amp";
  Schedule s = plain_pipeline(kName, params);
  const int keys = params.number("max-active-keys");
  const int frequency = params.number("min-update-frequency");
  require_positive(kName, "min_update_frequency", frequency);
  const int p = params.p;
  const int mak = keys == 0 ? p : keys;
  require(mak >= 1 && mak <= p, kName,
          "max_active_keys (" + std::to_string(keys) + ") must lie in [1, p] = [1, " + std::to_string(p) +
              "] (0 means p)");
  const int n = run_microbatches(kName, params);
  for (int st = 0; st < p; ++st)
    s.ops[static_cast<std::size_t>(st)] = amp_stage_ops(p, st, n, mak, frequency);
  return s;
}

std::vector<GeneratorInfo> amp_generators() {
  return {overlapping({"amp", "AMPNet (fairscale AMPnetPipe): max_active_keys in flight, local update every muf backwards",
           &make_amp, 100, [](const ScheduleParams& q) { return 3.0 * q.p * q.m; },
           {{.flags = "--max-active-keys",
             .help = "AMP: instances in flight (0 = p)",
             .order = 40,
             .label = "keys",
             .default_number = 0,
             .minimum = 0},
            {.flags = "--min-update-frequency",
             .help = "AMP: local update after this many backwards at a stage",
             .order = 50,
             .label = "freq",
             .default_number = 1}}})};
}

}  // namespace pipesim
