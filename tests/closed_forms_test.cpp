// The published closed forms (spec §4, §5, §6, §12.2), checked EXACTLY in integer ns by
// running the engine on the generated schedules with zero-cost links and a free
// optimizer step. Idle on a device = makespan - busy; ZB-H2 is measured per rank
// (last_end - first_start - busy), as the authors' script does (spec §12.2).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cost_models/uniform.hpp"
#include "schedules/generator.hpp"
#include "schedules/op_text.hpp"
#include "sim/engine.hpp"
#include "sim/timeline.hpp"
#include "tests/same_run.hpp"

namespace pipesim {
namespace {

ScheduleParams params(int p, int m, int v = 1, int iterations = 1) {
  ScheduleParams out;
  out.p = p;
  out.m = m;
  out.v = v;
  out.iterations = iterations;
  return out;
}

// fwd = F, full backward = bwd, of which wgrad is the weight-gradient part (I = bwd - wgrad).
UniformCostModel costs(Tick fwd, Tick bwd, Tick wgrad = 0) {
  UniformCostConfig cfg;
  cfg.stage = StageCosts{fwd, bwd, wgrad};
  return UniformCostModel(cfg);
}

std::string label(const std::string& name, int p, int m, Tick f, Tick b, Tick w = 0, int v = 1) {
  return name + " p=" + std::to_string(p) + " m=" + std::to_string(m) + " v=" + std::to_string(v) +
         " F=" + std::to_string(f) + " B=" + std::to_string(b) + " W=" + std::to_string(w);
}

struct Times {
  Tick f, b;
};
const std::vector<Times> kUnsplitTimes = {{1000, 2000}, {3000, 1000}, {1500, 1500}, {7, 13}};

// ---- GPipe and 1F1B: makespan (m + p - 1)(t_F + t_B), idle (p - 1)(t_F + t_B) ---------

TEST(ClosedForms, GpipeAnd1F1BMakespan) {
  for (const char* name : {"gpipe", "1f1b"}) {
    for (int p : {1, 2, 3, 4, 8}) {
      for (int m : {1, 2, 3, 4, 7, 8, 16}) {
        for (const Times& t : kUnsplitTimes) {
          SCOPED_TRACE(label(name, p, m, t.f, t.b));
          const SimResult r = simulate(generate(name, params(p, m)), costs(t.f, t.b));
          EXPECT_EQ(r.makespan, (m + p - 1) * (t.f + t.b));
          for (const DeviceStats& d : r.devices) {
            EXPECT_EQ(d.busy, m * (t.f + t.b));
            EXPECT_EQ(r.makespan - d.busy, (p - 1) * (t.f + t.b));
          }
        }
      }
    }
  }
}

TEST(ClosedForms, SplitBackward1F1BIdleIncludesWeightGradient) {
  // ZB Table 2, row 1F1B: with B = I + W unsplit, idle = (p-1)(T_F + T_B + T_W).
  const Tick f = 1000, bin = 1200, w = 700;
  for (int p : {2, 4, 8}) {
    const SimResult r = simulate(generate("1f1b", params(p, 2 * p)), costs(f, bin + w, w));
    for (const DeviceStats& d : r.devices) EXPECT_EQ(r.makespan - d.busy, (p - 1) * (f + bin + w));
  }
}

TEST(ClosedForms, OneFOneBPeakActivations) {
  for (int p : {1, 2, 4, 8}) {
    for (int m : {1, 2, 3, 4, 8, 16}) {
      SCOPED_TRACE(label("1f1b", p, m, 1000, 2000));
      const SimResult r = simulate(generate("1f1b", params(p, m)), costs(1000, 2000));
      for (int rank = 0; rank < p; ++rank)
        EXPECT_EQ(r.devices[static_cast<std::size_t>(rank)].peak_activations, std::min(p - rank, m)) << "rank " << rank;
    }
  }
}

TEST(ClosedForms, GpipePeakActivationsIsM) {
  const SimResult r = simulate(generate("gpipe", params(4, 8)), costs(1000, 2000));
  for (const DeviceStats& d : r.devices) EXPECT_EQ(d.peak_activations, 8);
}

// ---- interleaved: idle (p - 1)(t_F + t_B) / v, peak warm_r + 1 chunk activations ------

int interleaved_warmup(int p, int v, int r, int m) {
  return std::min((p - r - 1) * 2 + (v - 1) * p, m * v);  // m a multiple of p: rounds of p
}

TEST(ClosedForms, InterleavedIdleAndPeak) {
  for (int p : {1, 2, 3, 4, 8}) {
    for (int mult : {1, 2, 3}) {
      const int m = p * mult;
      for (int v : {1, 2, 3, 4}) {
        // Times divisible by v (12 = lcm(1..4)), so chunk times are exact.
        for (const Times& t : std::vector<Times>{{1200, 2400}, {3600, 1200}, {1200, 1200}}) {
          SCOPED_TRACE(label("interleaved", p, m, t.f, t.b, 0, v));
          const SimResult r = simulate(generate("interleaved", params(p, m, v)), costs(t.f, t.b));
          for (int rank = 0; rank < p; ++rank) {
            const DeviceStats& d = r.devices[static_cast<std::size_t>(rank)];
            EXPECT_EQ(d.busy, m * (t.f + t.b)) << "rank " << rank;
            EXPECT_EQ(r.makespan - d.busy, (p - 1) * (t.f + t.b) / v) << "rank " << rank;
            EXPECT_EQ(d.peak_activations, std::min(interleaved_warmup(p, v, rank, m) + 1, m * v)) << "rank " << rank;
          }
        }
      }
    }
  }
}

TEST(ClosedForms, InterleavedRankZeroPeakInStageActivations) {
  // Spec §6: rank 0 peaks at p + (p-1)/v stage activations, i.e. p*v + p - 1 chunk ones.
  for (int p : {2, 4, 8})
    for (int v : {2, 4}) {
      const SimResult r = simulate(generate("interleaved", params(p, 2 * p, v)), costs(1200, 2400));
      EXPECT_EQ(r.devices[0].peak_activations, p * v + p - 1) << "p=" << p << " v=" << v;
    }
}

// ---- Zero Bubble ----------------------------------------------------------------------
// Times (T_F, T_B = input-gradient, T_W); the formulas need T_W <= T_F and T_W <= T_B
// (with T_W > T_F the W's no longer fill the warm-up holes; the replay then idles more).
struct SplitTimes {
  Tick f, b, w;
};
const std::vector<SplitTimes> kSplitTimes = {
    {1000, 1000, 1000}, {1000, 1000, 300}, {1000, 2000, 500}, {2000, 1000, 500}, {1000, 1200, 800}, {3, 5, 2}};

TEST(ClosedForms, ZbH1IdlePerDevice) {
  for (int p : {2, 3, 4, 8, 16}) {
    for (int m : {2 * p, 2 * p + 1, 3 * p}) {
      for (const SplitTimes& t : kSplitTimes) {
        SCOPED_TRACE(label("zb-h1", p, m, t.f, t.b, t.w));
        const SimResult r = simulate(generate("zb-h1", params(p, m)), costs(t.f, t.b + t.w, t.w));
        for (int rank = 0; rank < p; ++rank) {
          const DeviceStats& d = r.devices[static_cast<std::size_t>(rank)];
          EXPECT_EQ(d.busy, m * (t.f + t.b + t.w));
          EXPECT_EQ(r.makespan - d.busy, (p - 1) * (t.f + t.b - t.w)) << "rank " << rank;
          EXPECT_EQ(d.peak_activations, p) << "rank " << rank;
        }
      }
    }
  }
}

TEST(ClosedForms, ZbH1IsAThirdOf1F1BWithEqualTimes) {
  const Tick t = 1000;
  for (int p : {4, 8}) {
    const SimResult zb = simulate(generate("zb-h1", params(p, 2 * p)), costs(t, 2 * t, t));
    const SimResult base = simulate(generate("1f1b", params(p, 2 * p)), costs(t, 2 * t, t));
    EXPECT_EQ(3 * (zb.makespan - zb.devices[0].busy), base.makespan - base.devices[0].busy);
  }
}

Tick span_idle(const DeviceStats& d) { return d.last_end - d.first_start - d.busy; }

TEST(ClosedForms, ZbH2PerRankSpanIsZeroBubbleWithEqualTimes) {
  const Tick t = 1000;
  for (int p : {4, 8, 16}) {
    const int m = 2 * p;
    SCOPED_TRACE(label("zb-h2", p, m, t, t, t));
    const SimResult r = simulate(generate("zb-h2", params(p, m)), costs(t, 2 * t, t));
    for (int rank = 0; rank < p; ++rank) {
      const DeviceStats& d = r.devices[static_cast<std::size_t>(rank)];
      EXPECT_EQ(span_idle(d), (p - 1) * (t + t - 2 * t)) << "rank " << rank;
      EXPECT_EQ(d.peak_activations, 2 * p - 1) << "rank " << rank;
    }
    // Pitfall 7: with a synchronous step, ZB-H2's global makespan equals ZB-H1's.
    const SimResult h1 = simulate(generate("zb-h1", params(p, m)), costs(t, 2 * t, t));
    EXPECT_EQ(r.makespan, h1.makespan);
  }
}

TEST(ClosedForms, ZbH2WorstRankSpanMatchesFormula) {
  // With unequal times ranks differ; the authors' measure is the worst rank (rank 0).
  for (int p : {4, 8, 16}) {
    for (int m : {2 * p, 3 * p}) {
      for (const SplitTimes& t : kSplitTimes) {
        SCOPED_TRACE(label("zb-h2", p, m, t.f, t.b, t.w));
        const SimResult r = simulate(generate("zb-h2", params(p, m)), costs(t.f, t.b + t.w, t.w));
        Tick worst = 0;
        for (const DeviceStats& d : r.devices) worst = std::max(worst, span_idle(d));
        EXPECT_EQ(worst, (p - 1) * (t.f + t.b - 2 * t.w));
        for (const DeviceStats& d : r.devices) EXPECT_EQ(d.peak_activations, 2 * p - 1);
      }
    }
  }
}

// ---- every op runs once, runs are deterministic ----------------------------------------

std::vector<std::string> all_schedules() { return {"gpipe", "1f1b", "interleaved", "zb-h1", "zb-h2"}; }

TEST(ClosedForms, EveryOpCompletesOnceAndAllIterationsRun) {
  for (const std::string& name : all_schedules()) {
    SCOPED_TRACE(name);
    const int p = 4, m = 8, iterations = 2;
    const Schedule s = generate(name, params(p, m, 2, iterations));
    TimelineRecorder rec;
    const SimResult r = simulate(s, costs(1200, 2400, name.starts_with("zb") ? 1200 : 0), &rec);
    ASSERT_EQ(rec.timeline.ops.size(), s.total_ops());
    std::vector<std::vector<int>> done(s.ops.size());
    for (std::size_t d = 0; d < s.ops.size(); ++d) done[d].assign(s.ops[d].size(), 0);
    for (const OpRecord& o : rec.timeline.ops) {
      ++done[static_cast<std::size_t>(o.ref.device)][static_cast<std::size_t>(o.ref.index)];
      EXPECT_EQ(o.op, s.ops[static_cast<std::size_t>(o.ref.device)][static_cast<std::size_t>(o.ref.index)]);
      EXPECT_LE(o.start, o.end);
      EXPECT_LE(o.end, r.makespan);
      // Synchronous: iteration t's micro-batch ops see t optimizer steps.
      if (is_microbatch_op(o.op.kind)) {
        EXPECT_EQ(o.weight_version, o.op.microbatch / m) << to_string(o.op);
      }
    }
    for (const auto& dev : done)
      for (int n : dev) EXPECT_EQ(n, 1);
    for (const DeviceStats& d : r.devices) EXPECT_EQ(d.final_activation_bytes, 0);
  }
}

TEST(ClosedForms, TwoIterationsTakeTwiceOne) {
  // The flush: iteration 2 starts on each device after its OptStep, and for GPipe/1F1B
  // the device that ends last (rank 0) also starts first, so makespans add up.
  for (const char* name : {"gpipe", "1f1b"}) {
    const SimResult one = simulate(generate(name, params(4, 8)), costs(1000, 2000));
    const SimResult two = simulate(generate(name, params(4, 8, 1, 2)), costs(1000, 2000));
    EXPECT_EQ(two.makespan, 2 * one.makespan) << name;
  }
}

TEST(ClosedForms, Deterministic) {
  for (const std::string& name : all_schedules()) {
    SCOPED_TRACE(name);
    const Schedule s = generate(name, params(4, 8, 2, 2));
    const UniformCostModel model = costs(1200, 2400, name.starts_with("zb") ? 600 : 0);
    TimelineRecorder a, b;
    const SimResult ra = simulate(s, model, &a);
    const SimResult rb = simulate(s, model, &b);
    expect_same_run(ra, a.timeline, rb, b.timeline);
  }
}

}  // namespace
}  // namespace pipesim
