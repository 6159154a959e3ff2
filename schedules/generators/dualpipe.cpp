// DualPipe and DualPipeV (DeepSeek-V3 report; deepseek-ai/DualPipe, dualpipe.py and
// dualpipev.py, `step`), spec §13, §15 pitfall 8, §16.
//
// Placement.
//   dualpipe   PP ranks (even). Pipeline 0 = forward direction, stage s on rank s;
//              pipeline 1 = reverse direction, stage s on rank PP-1-s. Weights 2x.
//              m micro-batches per iteration (even, >= 2PP): direction 0 runs ids
//              t*m .. t*m+m/2-1, direction 1 runs t*m+m/2 .. t*m+m-1.
//   dualpipev  p ranks hold the 2p stages of ONE pipeline in a V: rank r holds stages
//              r and 2p-1-r (chunks_per_device() = 2, so every op costs half a full
//              stage: the spec's half-chunk units). m >= 2p micro-batches, ids t*m + k.
//
// Every rank runs the same 8-step template on its two "phases". Phase 0 is the stage
// in the first half of its pipeline (stage h = min(r, PP-1-r); dualpipev: stage r),
// phase 1 the one in the second half (PP-1-h; dualpipev: 2p-1-r). With R = PP/2 and
// half = m/2 (dualpipev: R = p, h = r, half = m), per iteration:
//
//   1: 2(R-h-1)       x F0
//   2: (h+1)          x F0 F1
//   3: (R-h-1)        x I1 W F1         zero-bubble trick: the gradient leaves before W
//   4: (half-2R+h+1)  x F0 B1 F1 B0     the F&B pairs
//   5: (R-h-1)        x B1 F1 B0
//   6: (h+1)          x B1 B0           the second half of these are I's (W deferred)
//   7: (R-h-1)        x W I0
//   8: (h+1)          x W               drains the W queue
//   GRADSYNC per replica (dualpipe only), then OPT per replica
//
// Choices (the spec's [reconstruction] points and the details it leaves open; also in
// docs/schedules.md, section DualPipe / DualPipeV):
//   * A backward whose W is deferred (enable_zb in the code) is an I, its W goes to a
//     FIFO queue and comes out at the template's W slots. A backward that is not
//     deferred is ONE full B op, not "I then W": the official code computes input and
//     weight gradients in one autograd pass and sends the input gradient after both, so
//     a full B releases its gradient upstream at the same time the code does.
//   * F&B (spec §13.3, pitfall 8) is emitted as the F followed by the B: the engine runs
//     one compute op at a time, so the pair costs the serialized F + B_full, the reading
//     that matches the official figures. The overlapped `max` reading would need an
//     engine feature (two compute ops at once) and is not offered.
//   * Sends are released the instant their op ends (the engine's link model); the code
//     makes them visible only at the next _commit_and_wait_comm(). So the middle ranks'
//     special first step-4 iteration (F0 and B1 "not overlapped", the last step-2 F1
//     sent late) is the same op order as every other rank's here: it only moves commit
//     points. With instant release the measured idle is lower than the commit-point
//     figures of the spec (see tests/dualpipe_test.cpp and docs/schedules.md).
//   * In step 6 the code switches to deferred W's at i = (h+1)/2: before B1 when h is
//     odd, between B1 and B0 when h is even, so exactly h+1 backwards defer their W.
//   * End of iteration: each rank's two GradSyncs in ascending stage order (both ranks
//     of a collective hold the same pair {h, PP-1-h}, so their orders agree), then the
//     two OptSteps in the same order. Synchronous: the next iteration starts after them.
//
// dualpipe PP = 4, m = 8, rank 0 (direction 0 = ids 0..3, direction 1 = ids 4..7;
// phase 0 = pipeline 0 stage 0, phase 1 = pipeline 1 stage 3, written "1:3"):
//
//   0F0 0F1 | 0F2 1:3F4 | 1:3I4 1:3W4 1:3F5 | 0F3 1:3B5 1:3F6 0B0 | 1:3B6 1:3F7 0B1 |
//   1:3B7 0I2 | 0W2 0I3 | 0W3 | 0GRADSYNC 1:3GRADSYNC 0OPT 1:3OPT
//
// Engine replay, F = I = W = t, B = 2t, one column per t (capitals: pipeline 0, lower
// case: pipeline 1, '.' idle); every rank idles (PP/2-1)t = t:
//
//   r0: FFFfiwfFbbfBBbbf.BBbbIWIW
//   r1: .FfFfFbbfBBFbbfBBbbBBiIwW
//   r2: .fFfFfBBFbbfBBFbbBBbbIiWw
//   r3: fffFIWFfBBFbbBBF.bbBBiwiw
//
// dualpipev(p, m) is dualpipe(2p, 2m) cut in half: its rank r runs exactly what rank r
// of dualpipe(2p, 2m) runs, stage 2p-1-r standing for pipeline 1's stage 2p-1-r.
#include <deque>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "schedules/generators/generators.hpp"

namespace pipesim {
namespace {

// The template's step counts for one rank (spec §13.2). R = half the pipeline's stages
// in ranks (dualpipe: PP/2, dualpipev: p), h = the rank's distance from the nearer end
// (dualpipev: r), half = micro-batches per phase (dualpipe: m/2, dualpipev: m).
struct DualPipeSteps {
  int warmup_f0;    // step 1
  int f0_f1;        // step 2
  int zb_b1_w_f1;   // step 3
  int main_pairs;   // step 4
  int b1_f1_b0;     // step 5
  int b1_b0;        // step 6
  int w_b0;         // step 7
  int drain_w;      // step 8
};

DualPipeSteps dualpipe_steps(int R, int h, int half) {
  return {2 * (R - h - 1), h + 1, R - h - 1, half - 2 * R + h + 1, R - h - 1, h + 1, R - h - 1, h + 1};
}

// One stage replica a rank runs: where its ops go and which micro-batches it sees.
struct Phase {
  int pipeline = 0;
  int stage = 0;
  int first_microbatch = 0;  // global id of this phase's first micro-batch this iteration
  int next_f = 0;            // forwards / backwards issued so far this iteration
  int next_b = 0;
};

// Appends one rank's ops for one iteration, keeping the W queue of deferred backwards.
class RankIteration {
 public:
  RankIteration(std::vector<Op>& out, Phase phase0, Phase phase1) : out_(out), phases_{phase0, phase1} {}

  void forward(int phase) {
    Phase& ph = phases_[phase];
    out_.push_back(make_op(OpKind::F, ph.stage, ph.first_microbatch + ph.next_f++, ph.pipeline));
  }
  // defer_w: the code's enable_zb -- an I now, its W later from the queue.
  void backward(int phase, bool defer_w) {
    Phase& ph = phases_[phase];
    const Op b = make_op(defer_w ? OpKind::I : OpKind::B, ph.stage, ph.first_microbatch + ph.next_b++, ph.pipeline);
    out_.push_back(b);
    if (defer_w) w_queue_.push_back(make_op(OpKind::W, b.stage, b.microbatch, b.pipeline));
  }
  void weight() {
    PIPESIM_ASSERT(!w_queue_.empty());
    out_.push_back(w_queue_.front());
    w_queue_.pop_front();
  }

  // The 8 steps of spec §13.2.
  void run(const DualPipeSteps& n, int h) {
    for (int i = 0; i < n.warmup_f0; ++i) forward(0);
    for (int i = 0; i < n.f0_f1; ++i) {
      forward(0);
      forward(1);
    }
    for (int i = 0; i < n.zb_b1_w_f1; ++i) {
      backward(1, true);
      weight();
      forward(1);
    }
    for (int i = 0; i < n.main_pairs; ++i) {  // F&B = F then B (serialized), twice
      forward(0);
      backward(1, false);
      forward(1);
      backward(0, false);
    }
    for (int i = 0; i < n.b1_f1_b0; ++i) {
      backward(1, false);
      forward(1);
      backward(0, false);
    }
    bool defer = false;
    for (int i = 0; i < n.b1_b0; ++i) {
      if (i == n.b1_b0 / 2 && h % 2 == 1) defer = true;
      backward(1, defer);
      if (i == n.b1_b0 / 2 && h % 2 == 0) defer = true;
      backward(0, defer);
    }
    for (int i = 0; i < n.w_b0; ++i) {
      weight();
      backward(0, true);
    }
    for (int i = 0; i < n.drain_w; ++i) weight();
  }

  // Every phase ran all its micro-batches and every I got its W (the code's assert).
  bool complete(int half) const {
    for (const Phase& ph : phases_)
      if (ph.next_f != half || ph.next_b != half) return false;
    return w_queue_.empty();
  }

 private:
  std::vector<Op>& out_;
  Phase phases_[2];
  std::deque<Op> w_queue_;
};

void require_positive_params(const char* name, const ScheduleParams& params) {
  require_positive(name, "p", params.p);
  require_positive(name, "m", params.m);
  require_positive(name, "iterations", params.iterations);
}

// step 4 runs half-2R+h+1 >= 1 times on every rank only if m >= 2p (the code's assert).
void require_enough_microbatches(const char* name, const ScheduleParams& params) {
  require(params.m >= 2 * params.p, name,
          "m (" + std::to_string(params.m) + ") must be at least 2p = " + std::to_string(2 * params.p) +
              " (p = " + std::to_string(params.p) + ")");
}

Schedule base_schedule(const char* name, const ScheduleParams& params) {
  Schedule s;
  s.name = name;
  s.num_devices = params.p;
  s.microbatches = params.m;
  s.iterations = params.iterations;
  s.weight_policy = WeightPolicy::Current;
  s.ops.resize(static_cast<std::size_t>(params.p));
  return s;
}

}  // namespace

Schedule make_dualpipe(const ScheduleParams& params) {
  constexpr const char* kName = "dualpipe";
  require_positive_params(kName, params);
  require(params.p % 2 == 0, kName, "p (" + std::to_string(params.p) + ") must be even (two directions)");
  require(params.m % 2 == 0, kName,
          "m (" + std::to_string(params.m) + ") must be even (half the micro-batches per direction)");
  require_enough_microbatches(kName, params);
  const int pp = params.p;
  const int m = params.m;
  const int half = m / 2;
  const int R = pp / 2;

  Schedule s = base_schedule(kName, params);
  s.num_stages = pp;
  s.num_pipelines = 2;
  s.placement.assign(2, std::vector<int>(static_cast<std::size_t>(pp)));
  for (int st = 0; st < pp; ++st) {
    s.placement[0][static_cast<std::size_t>(st)] = st;
    s.placement[1][static_cast<std::size_t>(st)] = pp - 1 - st;
  }

  for (int r = 0; r < pp; ++r) {
    auto& list = s.ops[static_cast<std::size_t>(r)];
    list.reserve(static_cast<std::size_t>(params.iterations) * static_cast<std::size_t>(3 * m + 4));
    const int h = r < R ? r : pp - 1 - r;
    // Phase 0 is the direction in whose first half rank r sits (code: phase ^= second half).
    const int near = r < R ? 0 : 1;
    const int far = 1 - near;
    const DualPipeSteps steps = dualpipe_steps(R, h, half);
    for (int t = 0; t < params.iterations; ++t) {
      const Phase phase0{near, h, t * m + near * half};
      const Phase phase1{far, pp - 1 - h, t * m + far * half};
      RankIteration it(list, phase0, phase1);
      it.run(steps, h);
      PIPESIM_ASSERT(it.complete(half));
      list.push_back(grad_sync(phase0.stage, phase0.pipeline));
      list.push_back(grad_sync(phase1.stage, phase1.pipeline));
      list.push_back(opt_step(phase0.stage, phase0.pipeline));
      list.push_back(opt_step(phase1.stage, phase1.pipeline));
    }
  }
  return s;
}

Schedule make_dualpipev(const ScheduleParams& params) {
  constexpr const char* kName = "dualpipev";
  Schedule s = v_pipeline(kName, params);
  require_enough_microbatches(kName, params);
  const int p = params.p;
  const int m = params.m;

  for (int r = 0; r < p; ++r) {
    auto& list = s.ops[static_cast<std::size_t>(r)];
    list.reserve(static_cast<std::size_t>(params.iterations) * static_cast<std::size_t>(6 * m + 2));
    const DualPipeSteps steps = dualpipe_steps(p, r, m);
    for (int t = 0; t < params.iterations; ++t) {
      const Phase phase0{0, r, t * m};
      const Phase phase1{0, 2 * p - 1 - r, t * m};
      RankIteration it(list, phase0, phase1);
      it.run(steps, r);
      PIPESIM_ASSERT(it.complete(m));
      // One pipeline: no replicas to synchronize, only the two chunks' updates.
      list.push_back(opt_step(phase0.stage));
      list.push_back(opt_step(phase1.stage));
    }
  }
  return s;
}

std::vector<GeneratorInfo> dualpipe_generators() {
  return {{"dualpipe", "DualPipe: two directions on p ranks, F&B pairs, zero-bubble W (DeepSeek-V3)", &make_dualpipe,
           120, [](const ScheduleParams& q) { return 2.0 * q.p * q.m + 1.0 * q.p * q.p + 4.0 * q.p; }},
          {"dualpipev", "DualPipeV: DualPipe cut in half, 2p stages in a V on p ranks", &make_dualpipev, 130,
           [](const ScheduleParams& q) { return 4.0 * q.p * q.m + 2.0 * q.p * q.p + 2.0 * q.p; }}};
}

}  // namespace pipesim
