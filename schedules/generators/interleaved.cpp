// Interleaved 1F1B (Megatron-LM SC'21, spec §6) and interleaved zero bubble (PyTorch's
// ScheduleInterleavedZeroBubble, the ZB1P-style schedule of Qi et al. on v chunks), both as
// torch/distributed/pipelining/schedules.py generates them (_get_1f1b_rank_ops).
//
// Placement: p*v virtual stages, stage s on rank s % p, so rank r holds chunks
// c = 0..v-1 as stages c*p + r and a micro-batch crosses the ranks v times.
//
// Micro-batches go through in rounds: rounds = max(1, m div p), g = m / rounds per round
// (m must be a multiple of rounds: any m >= p that is, e.g. p = 4, m = 10 runs 2 rounds
// of 5; m a multiple of p gives g = p, Megatron's groups). Rank r's k-th forward and its
// k-th backward (k = 0 .. m*v-1) work on chunks
//
//   fchunk(k) = (k div g) mod v        bchunk(k) = v-1 - (k div g) mod v
//
// and each chunk takes its micro-batches in order 0, 1, ... (a counter per chunk).
//
//   interleaved     warm = min((v-1)*g + 2*(p-1-r), m*v)
//                   warm x F ; (m*v - warm) x [F, B] ; warm x B ; OPT per chunk
//   interleaved-zb  warm = min((v-1)*g + (p-1-r), m*v)
//                   warm x F ; (m*v - warm) x [F, I, W?] ; warm x [I, W?] ; the W's left ;
//                   OPT per chunk. W? is the W of the oldest I without one, from rank r's
//                   (r+1)-th [F, I] on (PyTorch's num_1f1b_microbatches = r).
//
// p = 2, v = 2, m = 4 (stage = chunk*2 + rank), interleaved:
//
//   r0: 0F0 0F1 2F0 2F1 | 0F2 2B0 0F3 2B1 2F2 0B0 2F3 0B1 | 2B2 2B3 0B2 0B3 | 0OPT 2OPT
//   r1: 1F0 1F1 | 3F0 3B0 3F1 3B1 1F2 1B0 1F3 1B1 3F2 3B2 3F3 3B3 | 1B2 1B3 | 1OPT 3OPT
//
// Unlike Megatron, m == p gets the same warm-up as any m (Megatron runs all forwards
// first there), and m need not be a multiple of p (docs/schedules.md).
#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "schedules/generators/generators.hpp"

namespace pipesim {
namespace {

struct Rounds {
  int per_round = 0;  // g
};

Rounds interleaved_rounds(const char* name, const ScheduleParams& params) {
  const int p = params.p;
  const int m = params.m;
  const int rounds = std::max(1, m / p);
  require(m % rounds == 0, name,
          "m (" + std::to_string(m) + ") must be a multiple of its number of rounds m div p = " +
              std::to_string(rounds) + " (p = " + std::to_string(p) + "); e.g. m = " +
              std::to_string(rounds * (m / rounds)) + " or " + std::to_string((rounds + 1) * p));
  return {m / rounds};
}

// One rank's ops for one iteration (PyTorch's _get_1f1b_rank_ops).
void rank_iteration(std::vector<Op>& list, int p, int v, int r, int m, int g, int base, bool zero_bubble) {
  const int total = m * v;
  const int hops = zero_bubble ? 1 : 2;
  const int warm = std::min((v - 1) * g + hops * (p - 1 - r), total);
  const auto fstage = [&](int k) { return ((k / g) % v) * p + r; };
  const auto bstage = [&](int k) { return (v - 1 - (k / g) % v) * p + r; };
  std::vector<int> next_f(static_cast<std::size_t>(v), 0), next_b(next_f), next_w(next_f);
  const auto counter = [&](std::vector<int>& c, int stage) { return base + c[static_cast<std::size_t>(stage / p)]++; };
  std::deque<int> pending_w;  // stages of the I's whose W is still to come, oldest first
  int backwards = 0;
  const auto backward = [&](int k) {
    const int stage = bstage(k);
    list.push_back(make_op(zero_bubble ? OpKind::I : OpKind::B, stage, counter(next_b, stage)));
    if (!zero_bubble) return;
    pending_w.push_back(stage);
    if (backwards++ >= r) {  // the first r backwards defer their W
      const int w = pending_w.front();
      pending_w.pop_front();
      list.push_back(make_op(OpKind::W, w, counter(next_w, w)));
    }
  };
  for (int k = 0; k < warm; ++k) list.push_back(make_op(OpKind::F, fstage(k), counter(next_f, fstage(k))));
  for (int k = 0; k < total - warm; ++k) {
    list.push_back(make_op(OpKind::F, fstage(k + warm), counter(next_f, fstage(k + warm))));
    backward(k);
  }
  for (int k = total - warm; k < total; ++k) backward(k);
  for (; !pending_w.empty(); pending_w.pop_front())
    list.push_back(make_op(OpKind::W, pending_w.front(), counter(next_w, pending_w.front())));
  for (int c = 0; c < v; ++c) {
    const auto i = static_cast<std::size_t>(c);
    PIPESIM_ASSERT(next_f[i] == m && next_b[i] == m && next_w[i] == (zero_bubble ? m : 0));
  }
}

Schedule make_interleaved_family(const ScheduleParams& params, const char* name, bool zero_bubble) {
  require_positive(name, "v", params.v);
  Schedule s = plain_pipeline(name, params, params.v);
  const Rounds rounds = interleaved_rounds(name, params);
  const int p = params.p;
  const int v = params.v;
  const int m = params.m;
  for (int r = 0; r < p; ++r) {
    auto& list = s.ops[static_cast<std::size_t>(r)];
    list.reserve(static_cast<std::size_t>(params.iterations) * static_cast<std::size_t>((zero_bubble ? 3 : 2) * m * v + v));
    for (int t = 0; t < params.iterations; ++t) {
      rank_iteration(list, p, v, r, m, rounds.per_round, t * m, zero_bubble);
      for (int c = 0; c < v; ++c) list.push_back(opt_step(c * p + r));
    }
  }
  return s;
}

}  // namespace

Schedule make_interleaved(const ScheduleParams& params) { return make_interleaved_family(params, "interleaved", false); }
Schedule make_interleaved_zb(const ScheduleParams& params) {
  return make_interleaved_family(params, "interleaved-zb", true);
}

std::vector<GeneratorInfo> interleaved_generators() {
  return {{"interleaved", "interleaved 1F1B with v chunks per device (Megatron-LM)", &make_interleaved, 30,
           [](const ScheduleParams& q) { return 1.0 * q.p * q.v * (2.0 * q.m + 1); }, {chunks_setting()}},
          {"interleaved-zb", "interleaved zero bubble: interleaved 1F1B with split I/W (PyTorch)",
           &make_interleaved_zb, 150, [](const ScheduleParams& q) { return 1.0 * q.p * q.v * (3.0 * q.m + 1); }, {chunks_setting()}}};
}

}  // namespace pipesim
