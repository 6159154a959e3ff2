// Chimera (Li & Hoefler, SC'21), spec §7: bidirectional pipelines. With p = D workers and
// 2f pipelines (f down, f up; f divides D/2), every worker holds 2f stage replicas, and
// each iteration every worker runs m = N micro-batches through them, then syncs the
// gradients of every replica and steps the optimizer (synchronous, flush).
//
// Placement (§7.6; f = 1 is §7.2): down pipeline j puts stage s on worker (s + j*D/f) mod D,
// up pipeline j on worker (D-1-s + j*D/f) mod D. Within data-parallel group g (width W) the
// local pipeline c (0..f-1 down j = c, f..2f-1 up j = c-f) is pipeline g*2f + c and worker
// w is device g*D + w; every stage thus has 2fW replicas, and GradSync(s) reduces over all.
//
// Micro-batch ids (§7.6 [code], FIFO per pipeline): with M ops per worker per iteration,
// each pipeline runs M/(2f) micro-batches; down j gets local ids j*M/(2f) + x, up j the
// same plus M/2; iteration t of group g adds t*W*M + g*M. (f = 1: down 0..M/2-1, up
// M/2..M-1. For M = D this is exactly the official j*D/(2f) + x.)
//
// f = 1, per worker, the official phase rule (§7.3/§7.4, ChimeraBk main_with_runtime*.py):
// X = the pipeline in which w holds a first-half stage sX = min(w, D-1-w), Y = the other;
// a = D/2 - sX, b = sX, c = b + D/2. One basic unit (N = D), D = 4:
//
//   w0: Fd0 Fd1 Fu0 Bu0 Fu1 Bu1 Bd0 Bd1      P1 a x F_X      P2 b x (F_Y F_X)
//   w1: Fd0 Fu0 Fd1 Fu1 Bu0 Bd0 Bu1 Bd1      P3 a x (F_Y B_Y) P4 b x (B_X B_Y)
//   w2: Fu0 Fd0 Fu1 Fd1 Bd0 Bu0 Bd1 Bu1      P5 a x B_X
//   w3: Fu0 Fu1 Fd0 Bd0 Fd1 Bd1 Bu0 Bu1
//
// N > D: direct concatenation repeats P1..P4 N/D times with P1 = a x (B_X F_X) for units
// u >= 1 (the previous unit's pending B_X fill the new unit's warm-up), P5 once at the end.
// Forward doubling runs N/(2D) doubled units:
//   unit 0: a x (F_X F_X); b x (F_Y F_Y F_X F_X); a x (F_Y F_Y B_Y); c x (B_X B_Y)
//   unit u >= 1 starts with a x (B_X F_X F_X) instead; P5 = a x B_X at the end.
// Backward halving [reconstruction, spec §7.4]: the doubling order on half-size
// micro-batches (microbatch_split = 2). m keeps meaning full-size micro-batches per worker,
// so halving runs 2m half micro-batch ops (schedule.microbatches = 2mW ids per iteration,
// each op costing half); the same m under doubling and halving is the same mini-batch.
// The order needs 2m to be a multiple of 2D, i.e. m a multiple of D.
//
// Gradient sync, f = 1 (§7.5, as the code does): the Y replica's GradSync right after the
// last unit's P4 if its stage D-1-sX > D/2 (eager), else after P5; then X's; then the
// OptSteps in the same order (Y, X). GradSync is non-blocking, so it overlaps compute.
//
// f > 1 (§7.6 [code]: AutoGeneratePipelineRank): unit-time slots. Micro-batch k0 of unit u
// enters its pipeline's stage 0 at slot 2D*u + 2*k0 (a new one every 2 slots), runs F at
// stage s in slot 2D*u + 2*k0 + s and B in slot 2D*u + 2*k0 + 2D-1-s (1F1B per pipeline),
// and a worker runs its replicas' ops in slot order. Each unit has D/(2f) micro-batches per
// pipeline. Two ops never share a slot: on worker w the down stages are all = r (mod 2)
// with r = w mod (D/f), the up stages all = r+1, and within one unit's 2D slots the down
// F's (up B's) fill slots r + [0, D-2] ([D, 2D-2]) of parity r, disjointly; likewise for
// the other parity. A replica's GradSync goes into the first empty slot after its last
// backward (official sync_list); then OptSteps in sync order. For f = 1 this slot rule
// reproduces the phase rule's compute order exactly (direct concatenation included).
// [reconstruction] The official code starts a pipeline's next unit when a micro-batch of
// the current one finishes, which for N = 2D is the 2D-slot offset used here but for
// N >= 3D starts units overlapping (and reuses micro-batch ids); pipesim keeps the clean
// 2D-slot offset for every unit and one GradSync per replica per iteration. Doubling and
// halving are defined for f = 1 only (the code has no f > 1 variant) and are rejected.
#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "schedules/generators/generators.hpp"

namespace pipesim {
namespace {

constexpr const char* kChimera = "chimera";

enum class Concat { Direct, Doubling, Halving };

// One op of a worker's per-iteration template, before ids: `pipe` is the local pipeline
// (0..f-1 down, f..2f-1 up); `index` the micro-batch's FIFO position in that pipeline's
// iteration (unused for GradSync / OptStep).
struct Step {
  OpKind kind;
  int pipe;
  int index;
};

struct Shape {
  int d = 0;         // D: stages = workers per group
  int f = 1;         // down (and up) pipelines per group
  int ops = 0;       // M: micro-batch ops per worker per iteration (2m for halving)
  Concat concat = Concat::Direct;

  int pipes() const { return 2 * f; }
  int per_pipe() const { return ops / (2 * f); }       // micro-batches of one pipeline
  int per_unit() const { return d / (2 * f); }         // ... within one basic unit
  int units() const { return concat == Concat::Direct ? ops / d : ops / (2 * d); }
  bool down(int pipe) const { return pipe < f; }
  int shift(int pipe) const { return (pipe % f) * (d / f); }  // j * D/f

  // Worker holding stage s of local pipeline `pipe`, and the stage it holds on worker w.
  int worker_of(int pipe, int s) const {
    return ((down(pipe) ? s : d - 1 - s) + shift(pipe)) % d;
  }
  int stage_on(int pipe, int w) const {
    const int rel = ((w - shift(pipe)) % d + d) % d;  // w's position along the pipeline's devices
    return down(pipe) ? rel : d - 1 - rel;
  }
  // First local micro-batch id of a pipeline (spec §7.6 [code], generalised to M ops).
  int first_id(int pipe) const { return (down(pipe) ? 0 : ops / 2) + (pipe % f) * per_pipe(); }
};

// Appends F / B steps with FIFO indices per pipeline.
class StepList {
 public:
  explicit StepList(int pipes) : next_f_(static_cast<std::size_t>(pipes), 0), next_b_(static_cast<std::size_t>(pipes), 0) {}
  void f(int pipe, int times = 1) {
    for (int i = 0; i < times; ++i) steps_.push_back({OpKind::F, pipe, next_f_[static_cast<std::size_t>(pipe)]++});
  }
  void b(int pipe) { steps_.push_back({OpKind::B, pipe, next_b_[static_cast<std::size_t>(pipe)]++}); }
  void push(OpKind kind, int pipe, int index = -1) { steps_.push_back({kind, pipe, index}); }
  std::vector<Step> take() { return std::move(steps_); }

 private:
  std::vector<int> next_f_, next_b_;
  std::vector<Step> steps_;
};

// f = 1: the official phase rule (basic unit, direct concatenation, doubling / halving).
std::vector<Step> phase_template(const Shape& sh, int w) {
  const int half = sh.d / 2;
  const int x = w < half ? 0 : 1;  // local pipe 0 = down, 1 = up
  const int y = 1 - x;
  const int sx = std::min(w, sh.d - 1 - w);
  const int a = half - sx, b = sx, c = b + half;
  const bool doubled = sh.concat != Concat::Direct;
  const int fw = doubled ? 2 : 1;  // forwards per forward slot
  StepList out(2);
  for (int u = 0; u < sh.units(); ++u) {
    for (int i = 0; i < a; ++i) {  // P1 (u >= 1: the previous unit's pending B_X first)
      if (u > 0) out.b(x);
      out.f(x, fw);
    }
    for (int i = 0; i < b; ++i) {  // P2
      out.f(y, fw);
      out.f(x, fw);
    }
    for (int i = 0; i < a; ++i) {  // P3
      out.f(y, fw);
      out.b(y);
    }
    for (int i = 0; i < (doubled ? c : b); ++i) {  // P4
      out.b(x);
      out.b(y);
    }
  }
  const bool eager = sh.d - 1 - sx > half;  // Y's stage index > D/2 (main_with_runtime.py)
  if (eager) out.push(OpKind::GradSync, y);
  for (int i = 0; i < a; ++i) out.b(x);  // P5
  if (!eager) out.push(OpKind::GradSync, y);
  out.push(OpKind::GradSync, x);
  out.push(OpKind::OptStep, y);
  out.push(OpKind::OptStep, x);
  return out.take();
}

// f > 1 (any f, direct concatenation): the slot rule of AutoGeneratePipelineRank.
std::vector<Step> slot_template(const Shape& sh, int w) {
  struct Timed {
    int slot;
    Step step;
  };
  std::vector<Timed> timed;
  for (int pipe = 0; pipe < sh.pipes(); ++pipe) {
    const int s = sh.stage_on(pipe, w);
    for (int u = 0; u < sh.units(); ++u)
      for (int k0 = 0; k0 < sh.per_unit(); ++k0) {
        const int enter = 2 * sh.d * u + 2 * k0;
        const int k = u * sh.per_unit() + k0;
        timed.push_back({enter + s, {OpKind::F, pipe, k}});
        timed.push_back({enter + 2 * sh.d - 1 - s, {OpKind::B, pipe, k}});
      }
  }
  std::sort(timed.begin(), timed.end(), [](const Timed& l, const Timed& r) { return l.slot < r.slot; });
  for (std::size_t i = 1; i < timed.size(); ++i) PIPESIM_ASSERT(timed[i - 1].slot < timed[i].slot);

  std::vector<Step> out;
  std::vector<int> synced;  // GradSync order, for the OptSteps
  std::deque<int> pending;  // replicas whose last backward ran, waiting for an empty slot
  std::size_t next = 0;
  for (int slot = 0; next < timed.size(); ++slot) {
    if (timed[next].slot == slot) {
      const Step& st = timed[next++].step;
      out.push_back(st);
      if (st.kind == OpKind::B && st.index == sh.per_pipe() - 1) pending.push_back(st.pipe);
    } else if (!pending.empty()) {
      out.push_back({OpKind::GradSync, pending.front(), -1});
      synced.push_back(pending.front());
      pending.pop_front();
    }
  }
  for (int pipe : pending) {
    out.push_back({OpKind::GradSync, pipe, -1});
    synced.push_back(pipe);
  }
  for (int pipe : synced) out.push_back({OpKind::OptStep, pipe, -1});
  return out;
}

Concat parse_concat(const std::string& name) {
  if (name == "direct") return Concat::Direct;
  if (name == "doubling") return Concat::Doubling;
  PIPESIM_ASSERT(name == "halving");  // generate() checked the choices (its ScheduleSetting)
  return Concat::Halving;
}

Shape check_params(const ScheduleParams& params) {
  const int pipelines = params.number("pipelines");
  const std::string concat = params.text("concat");
  require_positive(kChimera, "p", params.p);
  require_positive(kChimera, "m", params.m);
  require_positive(kChimera, "pipelines", pipelines);
  require_positive(kChimera, "width", params.number("width"));
  require_positive(kChimera, "iterations", params.iterations);
  const int d = params.p, m = params.m;
  const auto str = [](int v) { return std::to_string(v); };
  require(d % 2 == 0, kChimera, "p (" + str(d) + ") must be even (a down and an up pipeline share the workers)");
  require(pipelines % 2 == 0, kChimera, "pipelines (" + str(pipelines) + ") must be even: f down and f up pipelines");
  const int f = pipelines / 2;
  require((d / 2) % f == 0, kChimera, "pipelines (" + str(pipelines) + "): f = " + str(f) + " must divide p/2 = " + str(d / 2));
  Shape sh;
  sh.d = d;
  sh.f = f;
  sh.concat = parse_concat(concat);
  require(sh.concat == Concat::Direct || f == 1, kChimera,
          "concat " + concat + " is defined for 2 pipelines only, got pipelines = " + str(pipelines));
  if (sh.concat == Concat::Doubling)
    require(m % (2 * d) == 0, kChimera,
            "m (" + str(m) + ") must be a multiple of 2p = " + str(2 * d) + " for concat doubling");
  else
    require(m % d == 0, kChimera, "m (" + str(m) + ") must be a multiple of p (" + str(d) + ")");
  sh.ops = sh.concat == Concat::Halving ? 2 * m : m;
  return sh;
}

}  // namespace

Schedule make_chimera(const ScheduleParams& params) {
  const Shape sh = check_params(params);
  const int d = sh.d, width = params.number("width");

  Schedule s;
  s.name = kChimera;
  s.num_devices = width * d;
  s.num_stages = d;
  s.num_pipelines = width * sh.pipes();
  s.microbatches = width * sh.ops;
  s.iterations = params.iterations;
  s.microbatch_split = sh.concat == Concat::Halving ? 2 : 1;
  s.placement.assign(static_cast<std::size_t>(s.num_pipelines), std::vector<int>(static_cast<std::size_t>(d)));
  for (int g = 0; g < width; ++g)
    for (int pipe = 0; pipe < sh.pipes(); ++pipe)
      for (int st = 0; st < d; ++st)
        s.placement[static_cast<std::size_t>(g * sh.pipes() + pipe)][static_cast<std::size_t>(st)] =
            g * d + sh.worker_of(pipe, st);
  s.ops.resize(static_cast<std::size_t>(s.num_devices));

  for (int w = 0; w < d; ++w) {
    // Every group and iteration runs the same template; only ids and replicas shift.
    const std::vector<Step> tmpl = sh.f == 1 ? phase_template(sh, w) : slot_template(sh, w);
    for (int g = 0; g < width; ++g) {
      auto& list = s.ops[static_cast<std::size_t>(g * d + w)];
      list.reserve(tmpl.size() * static_cast<std::size_t>(params.iterations));
      for (int t = 0; t < params.iterations; ++t) {
        const int base = (t * width + g) * sh.ops;
        for (const Step& st : tmpl) {
          const int pipeline = g * sh.pipes() + st.pipe;
          const int stage = sh.stage_on(st.pipe, w);
          if (is_microbatch_op(st.kind))
            list.push_back(make_op(st.kind, stage, base + sh.first_id(st.pipe) + st.index, pipeline));
          else
            list.push_back(Op{st.kind, stage, -1, pipeline});
        }
      }
    }
  }
  return s;
}

std::vector<GeneratorInfo> chimera_generators() {
  // Its iterations overlap where the last gradients are still being reduced when the next
  // iteration's forwards could start (GradSync does not block).
  return {overlapping({"chimera", "Chimera: 2f bidirectional pipelines (f down, f up), direct/doubling/halving concat",
           &make_chimera, 60,
           [](const ScheduleParams& q) {
             const double split = q.text("concat") == "halving" ? 2 : 1;  // half-size micro-batches, twice as many ops
             return q.p * static_cast<double>(q.number("width")) * (2.0 * q.m * split + 2.0 * q.number("pipelines"));
           },
           {{.flags = "--pipelines", .help = "Chimera: 2f pipelines (f divides p/2)", .order = 10, .default_number = 2},
            {.flags = "--concat",
             .help = "Chimera with m > p: direct, doubling or halving",
             .order = 20,
             .default_text = "direct",
             .choices = {"direct", "doubling", "halving"}},
            {.flags = "--width",
             .help = "Chimera: data-parallel width W (replicas of the device group)",
             .order = 30,
             .default_number = 1}},
           {},
           [](const ScheduleParams& q) { return q.p * q.number("width"); }})};
}

}  // namespace pipesim
