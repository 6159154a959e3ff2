// DualPipe / DualPipeV (spec §13): exact op orders from the official `step` template,
// the structure the template implies (mirror ranks, W queue, step counts), deadlock
// freedom over a grid, the engine's bubble and memory numbers against §13.3, and errors.
//
// Bubble numbers: the spec's (p-2)t / (p-1)t and the figures' 66/6 assume sends become
// visible only at the code's commit points. The engine releases a send the instant its op
// ends, and reproduces the spec's "instant release" numbers, 63/3, i.e. half the idle:
// dualpipe (PP/2-1)t, dualpipev (p-1)t/2 (= p-1 half-chunk units).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "input_error.hpp"
#include "cost_models/uniform.hpp"
#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "schedules/op_text.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "sim/timeline.hpp"

namespace pipesim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ScheduleParams params(int p, int m, int iterations = 1) {
  ScheduleParams out;
  out.p = p;
  out.m = m;
  out.iterations = iterations;
  return out;
}

// F = f, input-gradient backward = b, W = w on one full stage (full backward b + w).
UniformCostModel costs(Tick f, Tick b, Tick w) {
  UniformCostConfig cfg;
  cfg.stage = StageCosts{f, b + w, w};
  return UniformCostModel(cfg);
}

std::string device_ops(const Schedule& s, int d) {
  std::string out;
  for (const Op& op : s.ops[static_cast<std::size_t>(d)]) out += (out.empty() ? "" : " ") + to_string(op);
  return out;
}

std::vector<std::string> all_device_ops(const Schedule& s) {
  std::vector<std::string> out;
  for (int d = 0; d < s.num_devices; ++d) out.push_back(device_ops(s, d));
  return out;
}

// Grid of the brief: PP in {2,4,6,8}, m in {2PP, 2PP+2, 3PP}; dualpipev also odd m.
std::vector<std::tuple<std::string, int, int>> grid() {
  std::vector<std::tuple<std::string, int, int>> out;
  for (int p : {2, 4, 6, 8})
    for (int m : {2 * p, 2 * p + 2, 3 * p}) out.emplace_back("dualpipe", p, m);
  for (int p : {1, 2, 3, 4, 6, 8})
    for (int m : {2 * p, 2 * p + 1, 3 * p}) out.emplace_back("dualpipev", p, m);
  return out;
}

// ---- exact orders (spec §13.2 steps 1-8, counted by hand in the comments) ------------

TEST(DualPipe, OrderP4M8) {
  // R = 2, half = 4. Rank 0 (h = 0): steps 1-8 = 2, 1, 1, 1, 1, 1, 1, 1 repetitions;
  // rank 1 (h = 1): 0, 2, 0, 2, 0, 2, 0, 2 (step 6 defers from i = 1 on, h odd).
  // Ranks 2, 3 mirror ranks 1, 0 with the directions swapped (ids 4..7 are direction 1).
  const Schedule s = generate("dualpipe", params(4, 8));
  EXPECT_THAT(all_device_ops(s),
              ElementsAre("0F0 0F1 0F2 1:3F4 1:3I4 1:3W4 1:3F5 0F3 1:3B5 1:3F6 0B0 1:3B6 1:3F7 0B1 "
                          "1:3B7 0I2 0W2 0I3 0W3 0GRADSYNC 1:3GRADSYNC 0OPT 1:3OPT",
                          "1F0 1:2F4 1F1 1:2F5 1F2 1:2B4 1:2F6 1B0 1F3 1:2B5 1:2F7 1B1 1:2B6 1B2 "
                          "1:2I7 1I3 1:2W7 1W3 1GRADSYNC 1:2GRADSYNC 1OPT 1:2OPT",
                          "1:1F4 2F0 1:1F5 2F1 1:1F6 2B0 2F2 1:1B4 1:1F7 2B1 2F3 1:1B5 2B2 1:1B6 "
                          "2I3 1:1I7 2W3 1:1W7 1:1GRADSYNC 2GRADSYNC 1:1OPT 2OPT",
                          "1:0F4 1:0F5 1:0F6 3F0 3I0 3W0 3F1 1:0F7 3B1 3F2 1:0B4 3B2 3F3 1:0B5 "
                          "3B3 1:0I6 1:0W6 1:0I7 1:0W7 1:0GRADSYNC 3GRADSYNC 1:0OPT 3OPT"));
}

TEST(DualPipe, VOrderP2M4) {
  // R -> p = 2, h -> r, half -> m = 4. Rank 0 holds stages 0 and 3, rank 1 stages 1, 2.
  const Schedule s = generate("dualpipev", params(2, 4));
  EXPECT_THAT(all_device_ops(s),
              ElementsAre("0F0 0F1 0F2 3F0 3I0 3W0 3F1 0F3 3B1 3F2 0B0 3B2 3F3 0B1 3B3 0I2 0W2 0I3 0W3 0OPT 3OPT",
                          "1F0 2F0 1F1 2F1 1F2 2B0 2F2 1B0 1F3 2B1 2F3 1B1 2B2 1B2 2I3 1I3 2W3 1W3 1OPT 2OPT"));
}

TEST(DualPipe, ShapeAndPlacement) {
  const Schedule s = generate("dualpipe", params(6, 12, 2));
  EXPECT_EQ(s.num_devices, 6);
  EXPECT_EQ(s.num_stages, 6);
  EXPECT_EQ(s.num_pipelines, 2);
  EXPECT_EQ(s.microbatches, 12);
  EXPECT_EQ(s.iterations, 2);
  EXPECT_EQ(s.weight_policy, WeightPolicy::Current);
  EXPECT_EQ(s.placement, (std::vector<std::vector<int>>{{0, 1, 2, 3, 4, 5}, {5, 4, 3, 2, 1, 0}}));
  EXPECT_EQ(s.chunks_per_device(), 1);
  // Direction 0 owns ids t*m .. t*m+5, direction 1 t*m+6 .. t*m+11.
  for (const auto& list : s.ops)
    for (const Op& op : list)
      if (is_microbatch_op(op.kind)) {
        EXPECT_EQ((op.microbatch % 12) / 6, op.pipeline) << to_string(op);
      }

  const Schedule v = generate("dualpipev", params(3, 7));
  EXPECT_EQ(v.num_devices, 3);
  EXPECT_EQ(v.num_stages, 6);
  EXPECT_EQ(v.num_pipelines, 1);
  EXPECT_EQ(v.placement, (std::vector<std::vector<int>>{{0, 1, 2, 2, 1, 0}}));
  EXPECT_EQ(v.chunks_per_device(), 2);  // each op costs half a full stage
}

// ---- structure -------------------------------------------------------------------------

// Rank PP-1-r runs rank r's list with the two directions swapped. So the middle ranks
// R-1 and R, which the code special-cases in step 4's first iteration, run the same op
// order as the others' template (the special case only moves commit points).
TEST(DualPipe, MirrorRanksRunTheSameTemplate) {
  for (int pp : {2, 4, 6, 8})
    for (int m : {2 * pp, 2 * pp + 2, 3 * pp}) {
      const Schedule s = generate("dualpipe", params(pp, m, 2));
      const int half = m / 2;
      for (int r = 0; r < pp / 2; ++r) {
        const auto& a = s.ops[static_cast<std::size_t>(r)];
        const auto& b = s.ops[static_cast<std::size_t>(pp - 1 - r)];
        ASSERT_EQ(a.size(), b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
          Op mirrored = a[i];
          mirrored.pipeline = 1 - a[i].pipeline;
          if (is_microbatch_op(a[i].kind)) mirrored.microbatch += a[i].pipeline == 0 ? half : -half;
          if (a[i].kind == OpKind::GradSync || a[i].kind == OpKind::OptStep) {
            EXPECT_EQ(b[i].kind, a[i].kind);
            EXPECT_EQ(b[i].stage, a[i].stage) << "GradSyncs in the same stage order on both ranks";
          } else {
            EXPECT_EQ(b[i], mirrored) << "pp=" << pp << " m=" << m << " rank " << r << " position " << i;
          }
        }
      }
    }
}

// DualPipeV is DualPipe "cut in half": rank r of dualpipev(p, m) runs rank r of
// dualpipe(2p, 2m), its stage s >= p standing for pipeline 1's stage s (same rank).
TEST(DualPipe, VIsDualPipeCutInHalf) {
  for (int p : {1, 2, 3, 4, 8})
    for (int m : {2 * p, 2 * p + 1, 3 * p}) {
      const int its = 2;
      const Schedule v = generate("dualpipev", params(p, m, its));
      const Schedule d = generate("dualpipe", params(2 * p, 2 * m, its));
      for (int r = 0; r < p; ++r) {
        std::vector<Op> expected;
        for (const Op& op : d.ops[static_cast<std::size_t>(r)])
          if (op.kind != OpKind::GradSync) expected.push_back(op);
        std::vector<Op> mapped;
        for (Op op : v.ops[static_cast<std::size_t>(r)]) {
          op.pipeline = op.stage < p ? 0 : 1;
          if (is_microbatch_op(op.kind))  // iteration t's id t*m + j -> t*2m + pipeline*m + j
            op.microbatch = op.microbatch / m * 2 * m + op.pipeline * m + op.microbatch % m;
          mapped.push_back(op);
        }
        EXPECT_EQ(mapped, expected) << "p=" << p << " m=" << m << " rank " << r;
      }
      // Same timing with half-size chunks: dualpipe(2p, 2m) at full-stage time t/2.
      const SimResult rv = simulate(v, costs(1000, 1000, 1000));
      const SimResult rd = simulate(d, costs(500, 500, 500));
      EXPECT_EQ(rv.makespan, rd.makespan) << "p=" << p << " m=" << m;
    }
}

// Per iteration and rank: m F's and m backwards; 2R-h-1 backwards defer their W (steps
// 3, 6, 7), the rest are full B's; the W's come out FIFO after their I's and the queue
// ends empty (the code's assert).
TEST(DualPipe, WQueueIsFifoAndEndsEmpty) {
  for (const auto& [name, p, m] : grid()) {
    const Schedule s = generate(name, params(p, m, 2));
    const bool dual = name == "dualpipe";
    const int R = dual ? p / 2 : p;
    for (int r = 0; r < p; ++r) {
      SCOPED_TRACE(name + " p=" + std::to_string(p) + " m=" + std::to_string(m) + " rank " + std::to_string(r));
      const int h = dual ? std::min(r, p - 1 - r) : r;
      std::map<OpKind, int> count;
      std::vector<Op> pending_w;  // I's whose W has not run yet, in order
      for (const Op& op : s.ops[static_cast<std::size_t>(r)]) {
        ++count[op.kind];
        if (op.kind == OpKind::I) pending_w.push_back(op);
        if (op.kind == OpKind::W) {
          ASSERT_FALSE(pending_w.empty());
          EXPECT_EQ(op.stage, pending_w.front().stage);
          EXPECT_EQ(op.microbatch, pending_w.front().microbatch);
          pending_w.erase(pending_w.begin());
        }
        if (op.kind == OpKind::OptStep) {
          EXPECT_TRUE(pending_w.empty()) << "W queue empty at the iteration end";
        }
      }
      const int its = 2;
      EXPECT_EQ(count[OpKind::F], its * (dual ? m : 2 * m));
      EXPECT_EQ(count[OpKind::I], its * (2 * R - h - 1));
      EXPECT_EQ(count[OpKind::W], count[OpKind::I]);
      EXPECT_EQ(count[OpKind::B] + count[OpKind::I], count[OpKind::F]);
      EXPECT_EQ(count[OpKind::GradSync], dual ? its * 2 : 0);
      EXPECT_EQ(count[OpKind::OptStep], its * 2);
    }
  }
}

// ---- deadlock freedom and completeness ----------------------------------------------------

TEST(DualPipe, GridValidatesAndSimulates) {
  for (const auto& [name, p, m] : grid())
    for (int iterations : {1, 2}) {
      SCOPED_TRACE(name + " p=" + std::to_string(p) + " m=" + std::to_string(m) + " T=" + std::to_string(iterations));
      const Schedule s = generate(name, params(p, m, iterations));
      const ValidationReport report = validate(s);
      EXPECT_TRUE(report.ok()) << (report.errors.empty() ? "" : report.errors.front());
      // Every micro-batch op exactly once: (kind, pipeline, stage, id) unique and all there.
      std::set<std::tuple<int, int, int, int>> seen;
      for (const auto& list : s.ops)
        for (const Op& op : list)
          if (is_microbatch_op(op.kind)) {
            EXPECT_TRUE(seen.emplace(static_cast<int>(op.kind), op.pipeline, op.stage, op.microbatch).second)
                << to_string(op);
          }
      std::size_t forwards = 0;
      for (const auto& key : seen) forwards += std::get<0>(key) == static_cast<int>(OpKind::F) ? 1 : 0;
      const int replicas_per_mb = name == "dualpipe" ? p : 2 * p;  // stages a micro-batch crosses
      EXPECT_EQ(forwards, static_cast<std::size_t>(iterations * m * replicas_per_mb));
      // Zero-cost links and links with latency and bandwidth: both run to the end.
      EXPECT_NO_THROW(simulate(s, costs(1000, 1000, 1000)));
      UniformCostConfig slow;
      slow.link_latency = 300;
      slow.link_bandwidth = 1e9;
      slow.message_bytes = 700;
      slow.grad_bytes = 5000;
      EXPECT_NO_THROW(simulate(s, UniformCostModel(slow)));
    }
}

// ---- bubbles (spec §13.3), exact in integer ns ---------------------------------------------

TEST(DualPipe, IdleWithEqualTimesIsHalfTheCommitPointFigure) {
  const Tick t = 1000;  // F = B_input = W = t: fwd = t, bwd = 2t, wgrad = t
  for (int p : {2, 4, 6, 8, 16})
    for (int m : {2 * p, 2 * p + 2, 3 * p, 4 * p}) {
      SCOPED_TRACE("dualpipe p=" + std::to_string(p) + " m=" + std::to_string(m));
      const SimResult r = simulate(generate("dualpipe", params(p, m)), costs(t, t, t));
      EXPECT_EQ(r.makespan, 3 * m * t + (p / 2 - 1) * t);
      for (const DeviceStats& d : r.devices) {
        EXPECT_EQ(d.busy, 3 * m * t);
        EXPECT_EQ(r.makespan - d.busy, (p / 2 - 1) * t);  // spec, commit points: (p-2)t
      }
    }
  for (int p : {1, 2, 3, 4, 6, 8, 16})
    for (int m : {2 * p, 2 * p + 1, 3 * p, 4 * p}) {
      SCOPED_TRACE("dualpipev p=" + std::to_string(p) + " m=" + std::to_string(m));
      const SimResult r = simulate(generate("dualpipev", params(p, m)), costs(t, t, t));
      for (const DeviceStats& d : r.devices) {
        EXPECT_EQ(d.busy, 3 * m * t);                    // 2 chunks x m x (F + I + W) / 2
        EXPECT_EQ(2 * (r.makespan - d.busy), (p - 1) * t);  // spec, commit points: (p-1)t
      }
    }
}

TEST(DualPipe, OfficialFigureSizesGive63Over3) {
  // Spec §13.3: p = 8, m = 20 (DualPipe) and p = 4, m = 10 (DualPipeV) give 66 units
  // per row with 6 idle when sends wait for commit points, 63/3 when released at once.
  const Tick t = 1000;
  const SimResult dual = simulate(generate("dualpipe", params(8, 20)), costs(t, t, t));
  EXPECT_EQ(dual.makespan, 63 * t);
  for (const DeviceStats& d : dual.devices) EXPECT_EQ(dual.makespan - d.busy, 3 * t);
  // DualPipeV: one half-chunk op = t/2 with full-stage times t.
  const Tick u = t / 2;
  const SimResult v = simulate(generate("dualpipev", params(4, 10)), costs(t, t, t));
  EXPECT_EQ(v.makespan, 63 * u);
  for (const DeviceStats& d : v.devices) {
    EXPECT_EQ(d.busy, 60 * u);
    EXPECT_EQ(v.makespan - d.busy, 3 * u);
  }
}

TEST(DualPipe, DerivedIdleForForwardHeavyTimes) {
  // [derived] With instant release and W <= B <= F <= B + W (B = input gradient), every
  // rank idles (R-1)(F + B - W) (dualpipev: in chunk times). Outside that range the
  // idle is larger (e.g. F = 4, B = 2, W = 1 or any B > F); the spec gives no formula.
  struct Times {
    Tick f, b, w;
  };
  for (const Times& t : std::vector<Times>{{1000, 1000, 1000}, {2000, 1000, 1000}, {3000, 2000, 1000},
                                           {3000, 2000, 1500}, {7000, 4000, 3000}, {4000, 2000, 2000},
                                           {3000, 3000, 1000}, {1000, 1000, 500}})
    for (const auto& [name, p, m] : grid()) {
      SCOPED_TRACE(name + " p=" + std::to_string(p) + " m=" + std::to_string(m) + " F=" + std::to_string(t.f) +
                   " B=" + std::to_string(t.b) + " W=" + std::to_string(t.w));
      const bool dual = name == "dualpipe";
      const int R = dual ? p / 2 : p;
      const Tick chunk = dual ? 1 : 2;  // all times above are even
      const SimResult r = simulate(generate(name, params(p, m)), costs(t.f, t.b, t.w));
      for (const DeviceStats& d : r.devices) EXPECT_EQ(r.makespan - d.busy, (R - 1) * (t.f + t.b - t.w) / chunk);
    }
}

// ---- memory, weights, staleness -------------------------------------------------------------

TEST(DualPipe, PeakActivationsArePPPlusOne) {
  // README table: PP+1 per device. dualpipev's PP is its 2p stages: 2p+1 chunk activations.
  for (const auto& [name, p, m] : grid()) {
    const SimResult r = simulate(generate(name, params(p, m, 2)), costs(1000, 1000, 1000));
    const int pp = name == "dualpipe" ? p : 2 * p;
    for (const DeviceStats& d : r.devices) EXPECT_EQ(d.peak_activations, pp + 1) << name << " p=" << p << " m=" << m;
  }
}

TEST(DualPipe, TwoWeightCopiesAndNoStaleness) {
  for (const auto& [name, p, m] : grid()) {
    SCOPED_TRACE(name + " p=" + std::to_string(p) + " m=" + std::to_string(m));
    const int iterations = 3;
    const SimResult r = simulate(generate(name, params(p, m, iterations)), costs(1000, 2000, 500));
    for (const DeviceStats& d : r.devices) EXPECT_EQ(d.peak_weight_versions, 2);  // parameters 2x
    ASSERT_EQ(r.staleness.size(), static_cast<std::size_t>(name == "dualpipe" ? p : 2 * p));
    for (const StageStaleness& st : r.staleness) {
      // dualpipe: both replicas of a stage together see every micro-batch once.
      EXPECT_EQ(st.backwards, iterations * m);
      EXPECT_EQ(st.mismatched, 0);
      EXPECT_EQ(st.max_mismatch, 0);
      EXPECT_EQ(st.max_delay, 0);
      EXPECT_EQ(st.delay_sum, 0);
    }
  }
}

// ---- iterations and gradient synchronization ---------------------------------------------------

TEST(DualPipe, IterationsFlushBackToBack) {
  for (const char* name : {"dualpipe", "dualpipev"})
    for (int p : {2, 4, 8}) {
      const Tick one = simulate(generate(name, params(p, 2 * p + 2)), costs(1000, 1000, 1000)).makespan;
      const SimResult r = simulate(generate(name, params(p, 2 * p + 2, 3)), costs(1000, 1000, 1000));
      EXPECT_EQ(r.makespan, 3 * one) << name << " p=" << p;
      EXPECT_THAT(r.iteration_end, ElementsAre(one, 2 * one, 3 * one)) << name << " p=" << p;
    }
}

TEST(DualPipe, GradSyncPairsMirrorRanksAndGatesTheOptimizer) {
  UniformCostConfig cfg;
  cfg.stage = StageCosts{1000, 2000, 1000};
  cfg.grad_bytes = 4000;
  cfg.link_bandwidth = 1e9;  // 4 us per collective
  const int pp = 6;
  const Schedule s = generate("dualpipe", params(pp, 12, 2));
  TimelineRecorder rec;
  simulate(s, UniformCostModel(cfg), &rec);
  // One collective per stage per iteration, between the stage's two replicas' ranks.
  ASSERT_EQ(rec.timeline.collectives.size(), static_cast<std::size_t>(2 * pp));
  std::map<std::pair<int, int>, Tick> sync_end;  // (stage, iteration) -> end
  std::map<int, int> seen;
  for (const CollectiveRecord& c : rec.timeline.collectives) {
    ASSERT_EQ(c.participants.size(), 2u);
    const int a = c.participants[0].device, b = c.participants[1].device;
    EXPECT_EQ(a + b, pp - 1) << "ranks r and PP-1-r";
    const int stage = a;  // participant 0 is pipeline 0, whose stage s sits on rank s
    sync_end[{stage, seen[stage]++}] = c.end;
  }
  std::map<std::pair<int, int>, int> opt_seen;
  for (const OpRecord& r : rec.timeline.ops)
    if (r.op.kind == OpKind::OptStep) {
      const int n = opt_seen[{r.op.pipeline, r.op.stage}]++;
      EXPECT_GE(r.start, sync_end.at({r.op.stage, n})) << to_string(r.op);
    }
  // dualpipev has one pipeline: nothing to reduce.
  const Schedule v = generate("dualpipev", params(3, 6));
  for (const auto& list : v.ops)
    for (const Op& op : list) EXPECT_NE(op.kind, OpKind::GradSync);
}

// ---- parameter errors --------------------------------------------------------------------------

TEST(DualPipe, ParameterErrors) {
  using ::testing::AllOf;
  EXPECT_THAT(error_of("dualpipe", params(5, 10)), AllOf(HasSubstr("dualpipe"), HasSubstr("p (5) must be even")));
  EXPECT_THAT(error_of("dualpipe", params(4, 9)), HasSubstr("m (9) must be even"));
  EXPECT_THAT(error_of("dualpipe", params(4, 6)), HasSubstr("m (6) must be at least 2p = 8"));
  EXPECT_THAT(error_of("dualpipe", params(0, 8)), HasSubstr("p must be a positive integer"));
  EXPECT_THAT(error_of("dualpipe", params(4, 8, 0)), HasSubstr("iterations must be a positive integer"));
  EXPECT_THAT(error_of("dualpipev", params(4, 7)),
              AllOf(HasSubstr("dualpipev"), HasSubstr("m (7) must be at least 2p = 8")));
  EXPECT_THAT(error_of("dualpipev", params(-1, 8)), HasSubstr("p must be a positive integer"));
  EXPECT_THAT(error_of("dualpipev", params(2, 0)), HasSubstr("m must be a positive integer"));
  EXPECT_EQ(error_of("dualpipev", params(4, 9)), "");  // no evenness constraint
  EXPECT_EQ(error_of("dualpipe", params(2, 4)), "");
}

}  // namespace
}  // namespace pipesim
