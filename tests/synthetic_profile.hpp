#pragma once
// A synthetic profile for the profile and profiled-cost-model tests: every time an exact
// line in the micro-batch size b (round microseconds, so sums compare exactly in ns), every
// timed quantity summarised by `at(seconds)`, exact byte counts, no interference curve.
#include <cstdint>
#include <vector>

#include "cost_models/model_spec.hpp"
#include "cost_models/profile.hpp"
#include "cost_models/profiled.hpp"
#include "cost_models/transformer.hpp"

namespace pipesim {

// Times t = c0 + c1·b (seconds), in round microseconds so sums compare exactly in ns.
inline constexpr double kUs = 1e-6;
inline double block_f(double b) { return (10 + 100 * b) * kUs; }
inline double block_i(double b) { return (20 + 150 * b) * kUs; }
inline double block_w(double b) { return (5 + 80 * b) * kUs; }
inline double emb_f(double b) { return (1 + 2 * b) * kUs; }
inline double emb_w(double b) { return (2 + 3 * b) * kUs; }
inline double head_f(double b) { return (30 + 300 * b) * kUs; }
inline double head_i(double b) { return (15 + 120 * b) * kUs; }
inline double head_w(double b) { return (12 + 110 * b) * kUs; }

// Every repeat the same: 3 runs of `seconds`.
inline TimingStats exact_timing(double seconds) { return summarize_timings({seconds, seconds, seconds}); }

// A two-point curve of exact times: alone, and with a neighbour busy (or in turns).
inline InterferenceCurve two_points(double alone, double busy) {
  return {{1, busy / alone}, {exact_timing(alone), exact_timing(busy)}};
}

inline Profile synthetic_profile(const ModelSpec& m, const std::vector<int>& sizes, TimingStats (*at)(double)) {
  Profile p;
  p.backend = "cpu";
  p.date = "2026-11-30T08:00:00Z";
  p.machine = {"Test CPU", 2, "", "cpu", 1};
  p.libraries = {"GCC 12.2.0", "3.4.0", ""};
  p.settings = {3, 1, 1, "wall"};
  p.model = m;
  p.parameters = {layer_parameters(m), embedding_parameters(m), 2 * m.hidden,
                  static_cast<std::int64_t>(m.vocab) * m.hidden};
  p.block_optimizer = {at(7 * kUs), at(60 * kUs)};
  p.embedding_optimizer = {at(3 * kUs), at(22 * kUs)};
  p.head_norm_optimizer = {at(0.1 * kUs), at(0.5 * kUs)};
  p.head_weight_optimizer = {at(2 * kUs), at(19 * kUs)};
  for (int b : sizes) {
    MicroBatchProfile mb;
    mb.size = b;
    const std::int64_t n = static_cast<std::int64_t>(b) * m.seq_len;
    mb.block = {at(block_f(b)), at(block_i(b)), at(block_w(b)), 1000 * n, 800 * n};
    mb.embedding = {at(emb_f(b)), {}, at(emb_w(b)), 4 * n, 4 * n};
    mb.head = {at(head_f(b)), at(head_i(b)), at(head_w(b)), 2000 * n + 64, 1500 * n + 64};
    mb.message_bytes = 4 * n * m.hidden;
    p.micro_batches.push_back(mb);
  }
  p.link.kind = "thread-handoff";
  p.link.samples = {{4096, at(2e-6), {}}, {65536, at(8e-6), {}}};
  p.link.latency = 1e-6;
  p.link.bandwidth = 10e9;
  return p;
}

// `m`'s synthetic profile at sizes 1, 2, 4 (exact times) as a cost model's configuration.
inline ProfiledCostConfig synthetic_config(const ModelSpec& m) {
  ProfiledCostConfig c;
  c.profile = synthetic_profile(m, {1, 2, 4}, exact_timing);
  c.source = "tiny.json";
  return c;
}

}  // namespace pipesim
