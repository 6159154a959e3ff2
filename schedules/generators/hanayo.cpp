// Hanayo (Liu, Cheng, Zhou, You, "Hanayo: Harnessing Wave-like Pipeline Parallelism for
// Enhanced Large Model Training Efficiency", SC 2023, arXiv 2308.15762; spec §14.2): a
// wave-like pipeline with one model copy. A reconstruction: the spec's sketch, not the
// paper's tables (docs/schedules.md).
//
// Placement: W waves (--waves), 2W·p stages in a zig-zag, stage j on device j mod p where
// floor(j/p) is even and on p-1-(j mod p) where it is odd. Device r holds 2W chunks,
// stages 2pc + r and 2pc + 2p-1-r (c = 0 .. W-1); W = 1 is the V of ZB-V. Ops cost 1/(2W)
// of a full stage (chunks_per_device() = 2W).
//
// Order: "1F1B along the wave fronts", as the eager replays of v_shape.cpp find an order:
// every device's list is what it runs in a replay with unit times (F = B = one slot, free
// links), each device taking in each slot
//   1. a ready backward, oldest micro-batch first (then the lower stage): a micro-batch
//      that turned back drains at once, and frees its activation;
//   2. else a ready forward, the furthest stage first (then the oldest micro-batch), while
//      it holds fewer than 2W·p chunk activations (p micro-batches' worth, 1F1B's peak):
//      the wave front moves on before a new micro-batch enters.
// The cap yields only if no device could run anything (a replay that would stop); the
// tests check it never does on their grid (peak <= 2W·p). A micro-batch's first backward
// reaches every device 2W·p slots after its first forward, so every device fills to the
// cap once m >= 2p, in the same 2W·p - 1 forwards.
//
// Measured (tests/hanayo_test.cpp, F = B = t per full stage, free links, no optimizer
// time): makespan 2mt + (p-1)t/W, i.e. every device idle (p-1)/(2Wm + p-1) of it, when p
// divides m; otherwise (2W-1)(p - m mod p)t/W more. Peak: p·M_a on every device for m >= 2p.
// Weights: one copy, M_θ per device.
#include <limits>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "schedules/generators/generators.hpp"

namespace pipesim {
namespace {

constexpr const char* kName = "hanayo";

struct Work {
  OpKind kind;
  int stage;
  int mb;
};

// Ready forwards, the furthest stage first, then the oldest micro-batch; backwards, the
// oldest micro-batch first, then the lower stage.
struct LaterForward {
  bool operator()(const Work& a, const Work& b) const { return std::tie(b.stage, a.mb) > std::tie(a.stage, b.mb); }
};
struct LaterBackward {
  bool operator()(const Work& a, const Work& b) const { return std::tie(a.mb, a.stage) > std::tie(b.mb, b.stage); }
};

int device_of(int stage, int p) { return (stage / p) % 2 == 0 ? stage % p : p - 1 - stage % p; }

// Each device's ops of one iteration (micro-batches 0 .. m-1), by the replay above.
std::vector<std::vector<Work>> wave_order(int p, int m, int waves) {
  const int stages = 2 * waves * p;
  const long long cap = stages;
  const auto devices = static_cast<std::size_t>(p);
  std::vector<std::priority_queue<Work, std::vector<Work>, LaterForward>> forwards(devices);
  std::vector<std::priority_queue<Work, std::vector<Work>, LaterBackward>> backwards(devices);
  std::vector<long long> held(devices, 0);
  std::vector<std::vector<Work>> order(devices);
  for (auto& list : order) list.reserve(2 * static_cast<std::size_t>(stages / p) * static_cast<std::size_t>(m));
  for (int k = 0; k < m; ++k) forwards[0].push({OpKind::F, 0, k});
  const long long total = 2LL * stages * m;
  std::vector<std::pair<std::size_t, Work>> slot;  // the ops of one slot
  for (long long done = 0; done < total; done += static_cast<long long>(slot.size())) {
    slot.clear();
    for (std::size_t d = 0; d < devices; ++d) {
      if (!backwards[d].empty()) {
        slot.emplace_back(d, backwards[d].top());
        backwards[d].pop();
      } else if (!forwards[d].empty() && held[d] < cap) {
        slot.emplace_back(d, forwards[d].top());
        forwards[d].pop();
      }
    }
    if (slot.empty()) {  // every device waits on its cap: the furthest forward anywhere goes on
      std::size_t best = devices;
      for (std::size_t d = 0; d < devices; ++d)
        if (!forwards[d].empty() && (best == devices || LaterForward{}(forwards[best].top(), forwards[d].top())))
          best = d;
      PIPESIM_ASSERT(best < devices);  // work is left, and nothing is running
      slot.emplace_back(best, forwards[best].top());
      forwards[best].pop();
    }
    for (const auto& [d, w] : slot) {
      order[d].push_back(w);
      if (w.kind == OpKind::F) {
        ++held[d];
        if (w.stage + 1 < stages)
          forwards[static_cast<std::size_t>(device_of(w.stage + 1, p))].push({OpKind::F, w.stage + 1, w.mb});
        else
          backwards[d].push({OpKind::B, w.stage, w.mb});  // the last stage turns the micro-batch back
      } else {
        --held[d];
        if (w.stage > 0) backwards[static_cast<std::size_t>(device_of(w.stage - 1, p))].push({OpKind::B, w.stage - 1, w.mb});
      }
    }
  }
  return order;
}

}  // namespace

Schedule make_hanayo(const ScheduleParams& params) {
  const int waves = params.number("waves");
  require_positive(kName, "waves", waves);
  require_positive(kName, "p", params.p);
  require(2LL * waves * params.p <= std::numeric_limits<int>::max(), kName,
          "2 x waves x p = " + std::to_string(2LL * waves * params.p) + " stages is too many");
  Schedule s = plain_pipeline(kName, params, 2 * waves);
  const int p = params.p;
  const int m = params.m;
  for (int st = 0; st < s.num_stages; ++st) s.placement[0][static_cast<std::size_t>(st)] = device_of(st, p);
  const std::vector<std::vector<Work>> order = wave_order(p, m, waves);
  for (int r = 0; r < p; ++r) {
    auto& list = s.ops[static_cast<std::size_t>(r)];
    const auto& iteration = order[static_cast<std::size_t>(r)];
    list.reserve(static_cast<std::size_t>(params.iterations) * (iteration.size() + 2 * static_cast<std::size_t>(waves)));
    for (int t = 0; t < params.iterations; ++t) {
      for (const Work& w : iteration) list.push_back(make_op(w.kind, w.stage, t * m + w.mb));
      for (int c = 0; c < 2 * waves; ++c) list.push_back(opt_step(c * p + (c % 2 == 0 ? r : p - 1 - r)));
    }
  }
  return s;
}

std::vector<GeneratorInfo> hanayo_generators() {
  return {{"hanayo", "Hanayo: W waves of 2W chunks per device in a zig-zag, one model copy (reconstruction)",
           &make_hanayo, 200,
           [](const ScheduleParams& q) { return 2.0 * q.number("waves") * q.p * (2.0 * q.m + 1); },
           {{.flags = "--waves",
             .help = "Hanayo: waves W, 2W chunks per device in a zig-zag (1: a V)",
             .order = 80,
             .default_number = 2}}}};
}

}  // namespace pipesim
