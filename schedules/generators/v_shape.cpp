// V-Half and V-Min (Qi et al., "Pipeline Parallelism with Controllable Memory", arXiv
// 2405.15362), the V-shaped schedules with 1/2 and 1/3 of 1F1B's activation memory, built
// the way the authors' scheduler builds them (sail-sg/zero-bubble-pipeline-parallelism,
// zerobubble/scheduler/zbv_greedy.py): a repeating pattern of time slots, squeezed greedily.
//
// Placement as ZB-V: p ranks hold 2p stages in a V, rank r stage r (chunk 0) and 2p-1-r
// (chunk 1); ops cost half a stage. Per rank the ops are of six types, each in micro-batch
// order: F0, F1 (forward of chunk 0 / 1), B1, B0 (input gradient of chunk 1 / 0: I here),
// W1, W0 (their weight gradients).
//
//   1. pattern   slot of micro-batch k of type t on rank r: base[r][t] + 6k, with
//                V-Half base = (2r, 3p-r-2, 3p+g+2r-1, 6p+g-r-2), g = 3 if p is even else 0
//                V-Min  base = (r, 2p-r-1, 2p+g+r, 4p+g-r-1),      g = 2 if p % 3 == 0 else 0
//   2. put_w     a W after every B, in the first free slot after it (FIFO)
//   3. squeeze   ops in slot order, each moved to the earliest free slot after its inputs
//                (and its own previous micro-batch) that keeps the rank's peak memory
//                (F +1, W -1 chunk activations); twice: with the W's, then without them and
//                the W's put back; the warm-up before rank 0's first B0 and the steady
//                part up to its last F0 keep their slots
//   4. order     an eager replay of the slots (every op as early as its inputs, its rank's
//                previous op and its own previous micro-batch allow) gives each rank's order
//
// F = I = W, free links, p = 4, m = 8: V-Half 26.5 and V-Min 29.5 (F+I+W = 3 per
// micro-batch, so 24 of work), holding 3 and 2 micro-batches' activations at the peak:
// the published figures (tests/new_generators_test.cpp).
#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "schedules/generators/generators.hpp"

namespace pipesim {
namespace {

using Lists = std::vector<std::vector<int>>;  // per type: the slot of each micro-batch
constexpr int kNone = std::numeric_limits<int>::max();

// The earliest unplaced op over `types` lists of every rank: (slot, rank, type, micro-batch),
// ties to the lower rank, type, micro-batch; slot kNone when all are placed.
struct Next {
  int slot = kNone, rank = 0, type = 0, mb = 0;
};
Next earliest(const std::vector<Lists>& s, const std::vector<std::vector<std::size_t>>& at, int types) {
  Next best;
  for (int r = 0; r < static_cast<int>(s.size()); ++r)
    for (int t = 0; t < types; ++t) {
      const auto& list = s[static_cast<std::size_t>(r)][static_cast<std::size_t>(t)];
      const std::size_t i = at[static_cast<std::size_t>(r)][static_cast<std::size_t>(t)];
      if (i < list.size() && list[i] < best.slot) best = {list[i], r, t, static_cast<int>(i)};
    }
  return best;
}

// The four F/B lists of one rank -> the same plus one W list (two when `split`: W1, W0),
// each W in the first slot no F or B takes after its B.
Lists put_w(Lists s, bool split) {
  PIPESIM_ASSERT(s.size() == 4);
  int bound = 0;
  for (const auto& list : s) bound = std::max(bound, list.back());
  s.resize(split ? 6 : 5);
  int pending[2] = {0, 0};
  std::array<std::size_t, 4> at{};
  int i = 0;
  for (i = 0; i <= bound; ++i) {
    int next = kNone, type = 0;
    for (int t = 0; t < 4; ++t) {
      const auto ti = static_cast<std::size_t>(t);
      if (at[ti] < s[ti].size() && s[ti][at[ti]] < next) next = s[ti][at[ti]], type = t;
    }
    PIPESIM_ASSERT(next != kNone);
    if (next == i) {
      ++at[static_cast<std::size_t>(type)];
      if (type >= 2) ++pending[split ? type - 2 : 0];
      continue;
    }
    for (int w = 0; w < 2; ++w)
      if (pending[w] > 0) {
        s[static_cast<std::size_t>(4 + w)].push_back(i);
        --pending[w];
        break;
      }
  }
  --i;  // the loop's last slot
  for (int w = 0; w < 2; ++w)
    for (; pending[w] > 0; --pending[w]) s[static_cast<std::size_t>(4 + w)].push_back(++i);
  return s;
}

// Peak chunk activations of one rank's slots: F +1, W -1 (without W lists, each B's W is
// taken to run in the next slot no op takes).
int peak_memory(const Lists& s) {
  static constexpr int kDelta[] = {1, 1, 0, 0, -1};
  const bool has_w = s.size() > 4;
  int bound = 0;
  for (const auto& list : s) bound = std::max(bound, list.back());
  std::vector<std::size_t> at(s.size(), 0);
  int pending = 0, cur = 0, peak = 0;
  for (int i = 0; i <= bound; ++i) {
    int next = kNone, type = 0;
    for (std::size_t t = 0; t < s.size(); ++t)
      if (at[t] < s[t].size() && s[t][at[t]] < next) next = s[t][at[t]], type = static_cast<int>(t);
    PIPESIM_ASSERT(next != kNone);
    if (next == i) {
      ++at[static_cast<std::size_t>(type)];
      cur += kDelta[type];
      if (type == 2 || type == 3) ++pending;
    } else if (!has_w && pending > 0) {
      cur += kDelta[4];
      --pending;
    }
    peak = std::max(peak, cur);
  }
  return peak;
}

// Replays the slots eagerly with unit times: each op's start (in slots), and each rank's
// order of (type, micro-batch).
struct Replay {
  std::vector<Lists> start;
  std::vector<std::vector<std::pair<int, int>>> order;
};
Replay replay(const std::vector<Lists>& s) {
  const int ranks = static_cast<int>(s.size());
  const int types = static_cast<int>(s[0].size());
  std::vector<std::vector<std::size_t>> at(s.size(), std::vector<std::size_t>(s[0].size(), 0));
  std::vector<Lists> end(s.size());
  for (std::size_t r = 0; r < s.size(); ++r) {
    end[r].resize(s[r].size());
    for (std::size_t t = 0; t < s[r].size(); ++t) end[r][t].assign(s[r][t].size(), -1);
  }
  Replay out;
  out.order.resize(s.size());
  const auto done = [&](int r, int t, int k) {
    const int e = end[static_cast<std::size_t>(r)][static_cast<std::size_t>(t)][static_cast<std::size_t>(k)];
    PIPESIM_ASSERT(e >= 0);  // inputs come in slot order
    return e;
  };
  for (Next n = earliest(s, at, types); n.slot != kNone; n = earliest(s, at, types)) {
    ++at[static_cast<std::size_t>(n.rank)][static_cast<std::size_t>(n.type)];
    int ready = 0;
    if ((n.type == 0 || n.type == 2) && n.rank > 0) ready = std::max(ready, done(n.rank - 1, n.type, n.mb));
    if ((n.type == 1 || n.type == 3) && n.rank + 1 < ranks) ready = std::max(ready, done(n.rank + 1, n.type, n.mb));
    if (n.type > 0 && n.type < 4) ready = std::max(ready, done(n.rank, n.type - 1, n.mb));
    if (n.mb > 0) ready = std::max(ready, done(n.rank, n.type, n.mb - 1));
    auto& order = out.order[static_cast<std::size_t>(n.rank)];
    if (!order.empty()) ready = std::max(ready, done(n.rank, order.back().first, order.back().second));
    end[static_cast<std::size_t>(n.rank)][static_cast<std::size_t>(n.type)][static_cast<std::size_t>(n.mb)] = ready + 1;
    order.emplace_back(n.type, n.mb);
  }
  out.start = end;
  for (auto& rank : out.start)
    for (auto& list : rank)
      for (int& e : list) --e;
  return out;
}

// One squeeze pass (step 3).
std::vector<Lists> squeeze(std::vector<Lists> s, bool with_w) {
  if (with_w)
    for (Lists& rank : s) rank = put_w(rank, false);
  const int types = with_w ? 5 : 4;
  int memory = 0;
  for (const Lists& rank : s) memory = std::max(memory, peak_memory(rank));
  const int ranks = static_cast<int>(s.size());
  std::vector<std::vector<bool>> taken(s.size());
  for (std::size_t r = 0; r < s.size(); ++r) taken[r].assign(static_cast<std::size_t>(s[r].back().back()) + 1, false);
  std::vector<std::vector<std::size_t>> at(s.size(), std::vector<std::size_t>(static_cast<std::size_t>(types), 0));
  const int last_f0 = static_cast<int>(s[0][0].size()) - 1;
  int phase = 0;
  for (Next n = earliest(s, at, types); n.slot != kNone; n = earliest(s, at, types)) {
    ++at[static_cast<std::size_t>(n.rank)][static_cast<std::size_t>(n.type)];
    Lists& rank = s[static_cast<std::size_t>(n.rank)];
    int& slot = rank[static_cast<std::size_t>(n.type)][static_cast<std::size_t>(n.mb)];
    auto& free = taken[static_cast<std::size_t>(n.rank)];
    if (n.type == 3 && n.rank == 0 && phase == 0) phase = 1;
    if (phase == 1) {
      if (n.type == 0 && n.mb == last_f0) phase = 2;
      free[static_cast<std::size_t>(slot)] = true;
      continue;
    }
    if (phase == 0 && !with_w) {
      free[static_cast<std::size_t>(slot)] = true;
      continue;
    }
    const auto of = [&](int r, int t, int k) {
      return s[static_cast<std::size_t>(r)][static_cast<std::size_t>(t)][static_cast<std::size_t>(k)];
    };
    int after = -1;
    if ((n.type == 0 || n.type == 2) && n.rank > 0) after = std::max(after, of(n.rank - 1, n.type, n.mb));
    if ((n.type == 1 || n.type == 3) && n.rank + 1 < ranks) after = std::max(after, of(n.rank + 1, n.type, n.mb));
    if (n.type > 0 && n.type < 4) after = std::max(after, of(n.rank, n.type - 1, n.mb));
    if (n.type == 4) {  // the W of the mb-th B of either chunk
      std::vector<int> backwards = rank[2];
      backwards.insert(backwards.end(), rank[3].begin(), rank[3].end());
      std::sort(backwards.begin(), backwards.end());
      after = std::max(after, backwards[static_cast<std::size_t>(n.mb)]);
    }
    if (n.mb > 0) after = std::max(after, of(n.rank, n.type, n.mb - 1));
    PIPESIM_ASSERT(after + 1 <= n.slot);
    bool moved = false;
    for (int t = after + 1; t < n.slot && !moved; ++t) {
      if (free[static_cast<std::size_t>(t)]) continue;
      slot = t;
      moved = peak_memory(rank) <= memory;
    }
    if (!moved) slot = n.slot;
    free[static_cast<std::size_t>(slot)] = true;
  }
  if (!with_w)
    for (Lists& rank : s) rank = put_w(rank, false);
  return replay(s).start;
}

Schedule make_v_shape(const ScheduleParams& params, const char* name, bool half) {
  Schedule s = v_pipeline(name, params);
  const int p = params.p;
  const int m = params.m;
  require(m >= 2 * p, name,
          "m (" + std::to_string(m) + ") must be at least 2p = " + std::to_string(2 * p) + " (p = " + std::to_string(p) +
              ")");
  // Steps 1-4: each rank's order of (type, micro-batch), the same every iteration.
  std::vector<Lists> slots(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    const int g = half ? (p % 2 == 0 ? 3 : 0) : (p % 3 == 0 ? 2 : 0);
    const std::array<int, 4> base = half ? std::array<int, 4>{2 * r, 3 * p - r - 2, 3 * p + g + 2 * r - 1, 6 * p + g - r - 2}
                                         : std::array<int, 4>{r, 2 * p - r - 1, 2 * p + g + r, 4 * p + g - r - 1};
    for (int b : base) {
      std::vector<int> list;
      for (int k = 0; k < m; ++k) list.push_back(b + 6 * k);
      slots[static_cast<std::size_t>(r)].push_back(list);
    }
  }
  std::vector<Lists> first = squeeze(slots, true);
  for (Lists& rank : first) rank.resize(4);
  std::vector<Lists> second = squeeze(first, false);
  for (Lists& rank : second) rank = put_w(Lists(rank.begin(), rank.begin() + 4), true);
  const Replay order = replay(second);

  for (int r = 0; r < p; ++r) {
    auto& list = s.ops[static_cast<std::size_t>(r)];
    const int chunk0 = r, chunk1 = 2 * p - 1 - r;
    // Types: F0, F1, B1, B0, W1, W0.
    static constexpr OpKind kKind[] = {OpKind::F, OpKind::F, OpKind::I, OpKind::I, OpKind::W, OpKind::W};
    const int stage_of[] = {chunk0, chunk1, chunk1, chunk0, chunk1, chunk0};
    for (int t = 0; t < params.iterations; ++t) {
      for (const auto& [type, k] : order.order[static_cast<std::size_t>(r)])
        list.push_back(make_op(kKind[type], stage_of[type], t * m + k));
      list.push_back(opt_step(chunk0));
      list.push_back(opt_step(chunk1));
    }
  }
  return s;
}

}  // namespace

Schedule make_v_half(const ScheduleParams& params) { return make_v_shape(params, "v-half", true); }
Schedule make_v_min(const ScheduleParams& params) { return make_v_shape(params, "v-min", false); }

std::vector<GeneratorInfo> v_shape_generators() {
  const auto ops = [](const ScheduleParams& q) { return q.p * (6.0 * q.m + 2); };
  return {{"v-half", "V-Half: V-shaped, half of 1F1B's activation memory (controllable-memory paper)", &make_v_half,
           170, ops},
          {"v-min", "V-Min: V-shaped, a third of 1F1B's activation memory (controllable-memory paper)", &make_v_min,
           180, ops}};
}

}  // namespace pipesim
