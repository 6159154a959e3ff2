// AMDP, asynchronous multi-directional pipeline parallelism (Chen, Wu, Yu, ICML 2026),
// spec §8, following the official code (Vinsmoke86/AMDP, async_schedules.py) for D = 4
// and D = 8 and the reconstruction of §8.6 for larger D.
//
// Placement (§8.2, = Chimera f = D/4, §7.6). K = D/2 pipelines; pipeline id = the code's
// model chunk. Even chunks run down, odd chunks up:
//
//   chunk c even:  stage s on GPU (s + 2c) mod D        D = 8: chunk 0 shift 0, chunk 2 shift 4
//   chunk c odd:   stage s on GPU (2c + 1 - s) mod D           chunk 1 = (11 - r) mod 8, chunk 3 = 7 - r
//
// so chunk c's stage 0 sits on GPU 2c (even) or 2c + 1 (odd), and every GPU holds one
// stage of every chunk (K replicas, half the model).
//
// Micro-batch ids. N per iteration (a multiple of D), G = N/D groups, n_p = 2G per pipeline
// per iteration. The spec's F{c}.{k} (k-th micro-batch of pipeline c over the run) is
//
//   id(c, k) = (k / n_p) * N + c * n_p + k % n_p
//
// i.e. iteration t owns ids t*N .. t*N + N - 1, pipeline c the block of n_p inside it.
//
// Per-rank orders. The code's cyclic fwd_order / bwd_order tables (§8.3) are the rank's
// forwards / backwards of one group sorted by their time in an ideal, contention-free
// unit-time Chimera unit (t_F = t_B = 1): in a group pipeline c injects micro-batches
// j = 0, 1 at times 0, 1; the last stage runs F0 B0 F1 B1, so
//
//   F(s, j) at s + j   (ties: j = 0 first)      B(s, j) at 2D - 1 - s + 2j   (never tied)
//
// This rule reproduces both §8.3 tables exactly (tests/amdp_test.cpp checks it) and is
// used for every D. Per group (a pointer runs cyclically through each list, FIFO ids per
// pipeline), with B' = the previous group's deferred last backward:
//
//   ranks holding a first (and a last) stage:  F F B' F x (D-3) B F B x (D-2)
//   other ranks:                               B' F x D B x (D-1)
//   after the last group:                      B' U(T)
//
// D = 4: r0: F F | F B F B B  (last B deferred)     r1: F F F F | B B B
// D = 8: r0: F F F F F F F B F B B B B B B          r1: F x 8 B x 7
//
// A backward of a pipeline's last micro-batch of the iteration (j = n_p - 1, the code's
// "B*") is followed at once by that replica's GradSync, blocking (the code's mirror-group
// allreduce; the engine forms one collective of the K replicas of a stage). FIN, the
// data-parallel allreduce, has nothing to reduce at width 1 and emits nothing. U(t) = one
// OptStep per replica the rank holds, in pipeline order, inside the first group of
// iteration t >= 1 (it applies iteration t-1's gradient; no flush, no stashing: the
// weight policy is Current).
//
// U position, --amdp-update [reconstruction where it is not the code]:
//   code   D = 4: after the first-stage ranks' first backward of the group (before their
//                 last forward), after the last forward on the other ranks [code].
//          D = 8: after the group's last forward on every rank [code].
//          D > 8: the D = 8 rule (after the group's last forward) [reconstruction].
//   early  right after the deferred B' and its GradSync: the earliest legal point (a U
//          before it would precede its own GradSync). Only the first two forwards on
//          first-stage ranks run on the old weights.
//   late   right before the rank's first backward of the new iteration: no gradient of
//          iteration t is applied by U(t) (removes the code's last-stage spill, quirk 1),
//          but the last stage's j = 0 now straddles the update.
// No offered position can deadlock: U only waits for GradSyncs earlier in its own list.
// Every position keeps the mismatch at most one step (§8.5).
#include <algorithm>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "schedules/generators/generators.hpp"

namespace pipesim {
namespace {

constexpr const char* kAmdp = "amdp";

enum class UpdateAt { Code, Early, Late };

UpdateAt parse_update(const std::string& s) {
  if (s == "code") return UpdateAt::Code;
  if (s == "early") return UpdateAt::Early;
  PIPESIM_ASSERT(s == "late");  // generate() checked the choices (its ScheduleSetting)
  return UpdateAt::Late;
}

// GPU holding stage s of pipeline (chunk) c.
int amdp_device(int D, int c, int s) { return c % 2 == 0 ? (s + 2 * c) % D : ((2 * c + 1 - s) % D + D) % D; }

// One forward or backward position in a group: pipeline c's j-th (0 or 1) micro-batch.
struct Slot {
  int pipeline = 0;
  int j = 0;
  int stage = 0;
  int time = 0;  // in the ideal unit-time Chimera unit
};

// The rank's group of forwards (backward = false) or backwards, in the code's order.
std::vector<Slot> group_order(const std::vector<int>& stage_of, int D, bool backward) {
  std::vector<Slot> slots;
  for (int c = 0; c < static_cast<int>(stage_of.size()); ++c) {
    const int s = stage_of[static_cast<std::size_t>(c)];
    for (int j = 0; j < 2; ++j) slots.push_back({c, j, s, backward ? 2 * D - 1 - s + 2 * j : s + j});
  }
  std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) {
    return a.time != b.time ? a.time < b.time : a.j < b.j;
  });
  return slots;
}

// Emits one rank's ops; keeps the cyclic pointers and the FIFO micro-batch counters.
class RankWriter {
 public:
  RankWriter(std::vector<Op>& out, int D, int N, int rank)
      : out_(out), n_(N), n_p_(2 * N / D), count_f_(static_cast<std::size_t>(D / 2), 0),
        count_b_(static_cast<std::size_t>(D / 2), 0) {
    std::vector<int> stage_of(static_cast<std::size_t>(D / 2));
    for (int c = 0; c < D / 2; ++c)
      for (int s = 0; s < D; ++s)
        if (amdp_device(D, c, s) == rank) stage_of[static_cast<std::size_t>(c)] = s;
    first_stage_rank_ = std::find(stage_of.begin(), stage_of.end(), 0) != stage_of.end();
    for (int c = 0; c < D / 2; ++c) replicas_.emplace_back(c, stage_of[static_cast<std::size_t>(c)]);
    fwd_ = group_order(stage_of, D, false);
    bwd_ = group_order(stage_of, D, true);
  }

  bool first_stage_rank() const { return first_stage_rank_; }

  void forwards(int n) {
    for (int i = 0; i < n; ++i) {
      const Slot& x = fwd_[next_f_++ % fwd_.size()];
      out_.push_back(make_op(OpKind::F, x.stage, id(x.pipeline, count_f_[static_cast<std::size_t>(x.pipeline)]++), x.pipeline));
    }
  }

  // A pipeline's last backward of the iteration is followed by its replica's GradSync.
  void backwards(int n) {
    for (int i = 0; i < n; ++i) {
      const Slot& x = bwd_[next_b_++ % bwd_.size()];
      const int k = count_b_[static_cast<std::size_t>(x.pipeline)]++;
      out_.push_back(make_op(OpKind::B, x.stage, id(x.pipeline, k), x.pipeline));
      if (k % n_p_ == n_p_ - 1) out_.push_back(grad_sync(x.stage, x.pipeline));
    }
  }

  void update() {
    for (const auto& [c, s] : replicas_) out_.push_back(opt_step(s, c));
  }

 private:
  int id(int c, int k) const { return (k / n_p_) * n_ + c * n_p_ + k % n_p_; }

  std::vector<Op>& out_;
  int n_, n_p_;
  std::vector<int> count_f_, count_b_;
  std::vector<std::pair<int, int>> replicas_;  // (pipeline, stage), pipeline order
  std::vector<Slot> fwd_, bwd_;
  std::size_t next_f_ = 0, next_b_ = 0;
  bool first_stage_rank_ = false;
};

void write_rank(std::vector<Op>& out, int D, int N, int T, int rank, UpdateAt at) {
  RankWriter w(out, D, N, rank);
  const int G = N / D;
  for (int g = 0; g < T * G; ++g) {
    // U(t) sits in the first group of iteration t >= 1 (which always has a deferred B').
    const bool u = g % G == 0 && g > 0;
    const int deferred = g > 0 ? 1 : 0;
    if (w.first_stage_rank()) {
      w.forwards(2);
      w.backwards(deferred);
      if (u && at == UpdateAt::Early) w.update();
      w.forwards(D - 3);
      if (u && at == UpdateAt::Late) w.update();
      w.backwards(1);
      if (u && at == UpdateAt::Code && D == 4) w.update();
      w.forwards(1);
      if (u && at == UpdateAt::Code && D != 4) w.update();
      w.backwards(D - 2);
    } else {
      w.backwards(deferred);
      if (u && at == UpdateAt::Early) w.update();
      w.forwards(D);
      if (u && at != UpdateAt::Early) w.update();
      w.backwards(D - 1);
    }
  }
  w.backwards(1);
  w.update();
}

}  // namespace

Schedule make_amdp(const ScheduleParams& params) {
  require_positive(kAmdp, "p", params.p);
  require_positive(kAmdp, "m", params.m);
  require_positive(kAmdp, "iterations", params.iterations);
  const int D = params.p;
  const int N = params.m;
  require(D % 4 == 0, kAmdp,
          "p (" + std::to_string(D) + ") must be a multiple of 4 (K = p/2 pipelines on Chimera's f = p/4 placement)");
  require(N % D == 0, kAmdp,
          "m (" + std::to_string(N) + ") must be a multiple of p (" + std::to_string(D) +
              "): each group of p micro-batches gives every pipeline 2");
  const UpdateAt at = parse_update(params.text("amdp-update"));

  Schedule s;
  s.name = kAmdp;
  s.num_devices = D;
  s.num_stages = D;
  s.num_pipelines = D / 2;
  s.microbatches = N;
  s.iterations = params.iterations;
  s.blocking_grad_sync = true;  // the code's B* allreduce is blocking
  s.weight_policy = WeightPolicy::Current;
  s.placement.assign(static_cast<std::size_t>(D / 2), std::vector<int>(static_cast<std::size_t>(D)));
  for (int c = 0; c < D / 2; ++c)
    for (int st = 0; st < D; ++st) s.placement[static_cast<std::size_t>(c)][static_cast<std::size_t>(st)] = amdp_device(D, c, st);
  s.ops.resize(static_cast<std::size_t>(D));
  for (int r = 0; r < D; ++r) {
    auto& list = s.ops[static_cast<std::size_t>(r)];
    // 2 ops per micro-batch replica, a GradSync and an OptStep per replica per iteration.
    list.reserve(static_cast<std::size_t>(params.iterations) * static_cast<std::size_t>(2 * N + D));
    write_rank(list, D, N, params.iterations, r, at);
  }
  return s;
}

std::vector<GeneratorInfo> amdp_generators() {
  return {overlapping({"amdp", "AMDP: p/2 asynchronous pipelines on Chimera's placement, update inside the next iteration",
           &make_amdp, 110, [](const ScheduleParams& q) { return q.p * (2.0 * q.m + q.p); },
           {{.flags = "--amdp-update",
             .help = "AMDP: position of the optimizer step (see docs/schedules.md)",
             .order = 70,
             .label = "update",
             .default_text = "code",
             .choices = {"code", "early", "late"}}}})};
}

}  // namespace pipesim
