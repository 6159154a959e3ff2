// Interleaved 1F1B with v virtual stages per device (Megatron-LM SC'21), spec §6,
// following Megatron-core's forward_backward_pipelining_with_interleaving.
//
// Placement: p*v virtual stages, stage s on rank s % p, so rank r holds chunks
// c = 0..v-1 as stages c*p + r and a micro-batch crosses the ranks v times.
//
// Rank r's k-th forward / backward (k = 0 .. m*v-1) works on micro-batch mb(k) of chunk
// fchunk(k) / bchunk(k): micro-batches go through in groups of p, each group through
// chunk 0, 1, .., v-1 (forward) or v-1, .., 0 (backward):
//
//   fchunk(k) = (k mod pv) div p     bchunk(k) = v-1 - fchunk(k)     mb(k) = (k div pv)*p + k mod p
//
//   warm = m*v                              if m == p (all forwards, then all backwards)
//        = min((p-r-1)*2 + (v-1)*p, m*v)     otherwise
//   ops  = warm x F ; (m*v - warm) x [F(k + warm), B(k)] ; warm x B ; OPT per chunk
//
// p = 2, v = 2, m = 4 (stage = chunk*2 + rank):
//
//   r0: 0F0 0F1 2F0 2F1 | 0F2 2B0 0F3 2B1 2F2 0B0 2F3 0B1 | 2B2 2B3 0B2 0B3 | 0OPT 2OPT
//   r1: 1F0 1F1 | 3F0 3B0 3F1 3B1 1F2 1B0 1F3 1B1 3F2 3B2 3F3 3B3 | 1B2 1B3 | 1OPT 3OPT
//
// Rank r holds at most warm + 1 chunk activations (m*v when m == p).
#include <algorithm>
#include <string>

#include "schedules/generators/generators.hpp"

namespace pipesim {
namespace {

// Forwards rank r runs before its first backward (Megatron's num_warmup_microbatches).
int interleaved_warmup(int p, int v, int r, int m) {
  const int total = m * v;
  if (m == p) return total;
  return std::min((p - r - 1) * 2 + (v - 1) * p, total);
}

int forward_chunk(int k, int p, int v) { return (k % (p * v)) / p; }
int backward_chunk(int k, int p, int v) { return v - 1 - forward_chunk(k, p, v); }
int chunk_microbatch(int k, int p, int v) { return (k / (p * v)) * p + k % p; }

}  // namespace

Schedule make_interleaved(const ScheduleParams& params) {
  constexpr const char* kName = "interleaved";
  require_positive(kName, "v", params.v);
  Schedule s = plain_pipeline(kName, params, params.v);
  const int p = params.p;
  const int m = params.m;
  const int v = params.v;
  require(m % p == 0, kName,
          "m (" + std::to_string(m) + ") must be a multiple of p (" + std::to_string(p) + ")");

  const int total = m * v;
  for (int r = 0; r < p; ++r) {
    auto& list = s.ops[static_cast<std::size_t>(r)];
    list.reserve(static_cast<std::size_t>(params.iterations) * static_cast<std::size_t>(2 * total + v));
    const int warm = interleaved_warmup(p, v, r, m);
    for (int t = 0; t < params.iterations; ++t) {
      const int base = t * m;
      auto fwd = [&](int k) {
        return make_op(OpKind::F, forward_chunk(k, p, v) * p + r, base + chunk_microbatch(k, p, v));
      };
      auto bwd = [&](int k) {
        return make_op(OpKind::B, backward_chunk(k, p, v) * p + r, base + chunk_microbatch(k, p, v));
      };
      for (int k = 0; k < warm; ++k) list.push_back(fwd(k));
      for (int k = 0; k < total - warm; ++k) {
        list.push_back(fwd(k + warm));
        list.push_back(bwd(k));
      }
      for (int k = total - warm; k < total; ++k) list.push_back(bwd(k));
      for (int c = 0; c < v; ++c) list.push_back(opt_step(c * p + r));
    }
  }
  return s;
}

}  // namespace pipesim
