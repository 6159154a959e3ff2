// Chimera (spec §7, pitfalls §15.2-3): exact op orders from the spec and the official code,
// the published bubble ratios checked EXACTLY in integer ns with the engine (zero-cost
// links, free optimizer), activation and weight memory, staleness, validity over a grid,
// and parameter errors. Bubble ratio = idle / (devices x makespan), idle = makespan - busy.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "input_error.hpp"
#include "uniform_costs.hpp"
#include "cost_models/uniform.hpp"
#include "core/error.hpp"
#include "schedules/generator.hpp"
#include "schedules/op_text.hpp"
#include "schedules/validate.hpp"
#include "sim/engine.hpp"
#include "sim/timeline.hpp"

namespace pipesim {
namespace {

using ::testing::HasSubstr;

ScheduleParams params(int p, int m, int pipelines = 2, const std::string& concat = "direct", int width = 1,
                      int iterations = 1) {
  ScheduleParams out;
  out.p = p;
  out.m = m;
  out.set("pipelines", pipelines);
  out.set("concat", concat);
  out.set("width", width);
  out.iterations = iterations;
  return out;
}

UniformCostModel costs(Tick fwd, Tick bwd) { return testing_costs::uniform_costs(fwd, bwd); }

std::string join(const std::vector<Op>& ops, bool compute_only) {
  std::string out;
  for (const Op& op : ops)
    if (!compute_only || is_microbatch_op(op.kind)) out += (out.empty() ? "" : " ") + to_string(op);
  return out;
}
std::string device_ops(const Schedule& s, int d, bool compute_only = false) {
  return join(s.ops[static_cast<std::size_t>(d)], compute_only);
}

// The spec's notation for f = 1 ("Fd0 Bu1": kind, down/up, FIFO index in that pipeline)
// as pipesim ops of worker w: down = pipeline 0, stage w, id k; up = pipeline 1, stage
// D-1-w, id N/2 + k.
std::string spec_order(int d, int n, int w, const std::string& text) {
  std::istringstream in(text);
  std::vector<Op> ops;
  for (std::string tok; in >> tok;) {
    const OpKind kind = tok[0] == 'F' ? OpKind::F : OpKind::B;
    const bool down = tok[1] == 'd';
    const int k = std::stoi(tok.substr(2));
    ops.push_back(down ? make_op(kind, w, k, 0) : make_op(kind, d - 1 - w, n / 2 + k, 1));
  }
  return join(ops, false);
}

// Total idle over all devices and devices x makespan: the bubble ratio is their quotient.
struct Bubble {
  Tick idle = 0, span = 0;
};
Bubble bubble(const SimResult& r) {
  Bubble b;
  for (const DeviceStats& d : r.devices) b.idle += r.makespan - d.busy;
  b.span = static_cast<Tick>(r.devices.size()) * r.makespan;
  return b;
}
// idle / span == num / den, exactly.
void expect_ratio(const SimResult& r, long long num, long long den) {
  const Bubble b = bubble(r);
  EXPECT_EQ(b.idle * den, num * b.span) << "idle " << b.idle << " / span " << b.span << ", want " << num << "/" << den;
}

std::string error_of(const ScheduleParams& p) { return error_of("chimera", p); }

// ---- exact orders (spec §7.3, §7.4, §7.5) ------------------------------------------------

TEST(Chimera, BasicUnitD4MatchesFig3) {
  const Schedule s = generate("chimera", params(4, 4));
  const char* spec[] = {"Fd0 Fd1 Fu0 Bu0 Fu1 Bu1 Bd0 Bd1", "Fd0 Fu0 Fd1 Fu1 Bu0 Bd0 Bu1 Bd1",
                        "Fu0 Fd0 Fu1 Fd1 Bd0 Bu0 Bd1 Bu1", "Fu0 Fu1 Fd0 Bd0 Fd1 Bd1 Bu0 Bu1"};
  for (int w = 0; w < 4; ++w) EXPECT_EQ(device_ops(s, w, true), spec_order(4, 4, w, spec[w])) << "worker " << w;
  // Worker 0 reads 0 1 2 2 3 3 0 1 (paper).
  EXPECT_EQ(device_ops(s, 0, true), "0F0 0F1 1:3F2 1:3B2 1:3F3 1:3B3 0B0 0B1");
  EXPECT_EQ(s.placement, (std::vector<std::vector<int>>{{0, 1, 2, 3}, {3, 2, 1, 0}}));
  EXPECT_EQ(s.num_pipelines, 2);
  EXPECT_EQ(s.microbatches, 4);
  EXPECT_EQ(s.chunks_per_device(), 1);
}

TEST(Chimera, GradSyncAndOptStepPositionsFollowTheCode) {
  // Y's sync right after P4 when its stage > D/2 (workers 0 and 3 of D = 4: stage 3),
  // else after P5 before X's (workers 1 and 2: Y stage 2 = D/2); OptSteps Y then X.
  const Schedule s = generate("chimera", params(4, 4));
  EXPECT_EQ(device_ops(s, 0), "0F0 0F1 1:3F2 1:3B2 1:3F3 1:3B3 1:3GRADSYNC 0B0 0B1 0GRADSYNC 1:3OPT 0OPT");
  EXPECT_EQ(device_ops(s, 1), "1F0 1:2F2 1F1 1:2F3 1:2B2 1B0 1:2B3 1B1 1:2GRADSYNC 1GRADSYNC 1:2OPT 1OPT");
  EXPECT_EQ(device_ops(s, 2), "1:1F2 2F0 1:1F3 2F1 2B0 1:1B2 2B1 1:1B3 2GRADSYNC 1:1GRADSYNC 2OPT 1:1OPT");
  EXPECT_EQ(device_ops(s, 3), "1:0F2 1:0F3 3F0 3B0 3F1 3B1 3GRADSYNC 1:0B2 1:0B3 1:0GRADSYNC 3OPT 1:0OPT");
}

TEST(Chimera, BasicUnitD8WorkerZero) {
  const Schedule s = generate("chimera", params(8, 8));
  EXPECT_EQ(device_ops(s, 0, true),
            spec_order(8, 8, 0, "Fd0 Fd1 Fd2 Fd3 Fu0 Bu0 Fu1 Bu1 Fu2 Bu2 Fu3 Bu3 Bd0 Bd1 Bd2 Bd3"));
}

TEST(Chimera, DirectConcatenationD4N8WorkerZero) {
  const Schedule s = generate("chimera", params(4, 8));
  EXPECT_EQ(device_ops(s, 0, true),
            spec_order(4, 8, 0, "Fd0 Fd1 Fu0 Bu0 Fu1 Bu1 Bd0 Fd2 Bd1 Fd3 Fu2 Bu2 Fu3 Bu3 Bd2 Bd3"));
  EXPECT_EQ(s.microbatches, 8);
}

TEST(Chimera, ForwardDoublingD4N8) {
  // a = 2, b = 0, c = 2 on worker 0; a = b = 1, c = 3 on worker 1 (spec §7.4).
  const Schedule s = generate("chimera", params(4, 8, 2, "doubling"));
  EXPECT_EQ(device_ops(s, 0, true),
            spec_order(4, 8, 0, "Fd0 Fd1 Fd2 Fd3 Fu0 Fu1 Bu0 Fu2 Fu3 Bu1 Bd0 Bu2 Bd1 Bu3 Bd2 Bd3"));
  EXPECT_EQ(device_ops(s, 1, true),
            spec_order(4, 8, 1, "Fd0 Fd1 Fu0 Fu1 Fd2 Fd3 Fu2 Fu3 Bu0 Bd0 Bu1 Bd1 Bu2 Bd2 Bu3 Bd3"));
  EXPECT_EQ(s.microbatch_split, 1);
}

TEST(Chimera, ForwardDoublingSecondUnitStartsWithPendingBackwards) {
  const Schedule s = generate("chimera", params(4, 16, 2, "doubling"));
  EXPECT_EQ(device_ops(s, 0, true),
            spec_order(4, 16, 0,
                       "Fd0 Fd1 Fd2 Fd3 Fu0 Fu1 Bu0 Fu2 Fu3 Bu1 Bd0 Bu2 Bd1 Bu3 "
                       "Bd2 Fd4 Fd5 Bd3 Fd6 Fd7 Fu4 Fu5 Bu4 Fu6 Fu7 Bu5 Bd4 Bu6 Bd5 Bu7 Bd6 Bd7"));
}

TEST(Chimera, HalvingIsTheDoublingOrderOnTwiceAsManyHalfMicrobatches) {
  // m = 4 full micro-batches -> 8 half micro-batch ops per worker, each costing half.
  const Schedule halving = generate("chimera", params(4, 4, 2, "halving"));
  const Schedule doubling = generate("chimera", params(4, 8, 2, "doubling"));
  EXPECT_EQ(halving.microbatch_split, 2);
  EXPECT_EQ(halving.microbatches, 8);
  for (int w = 0; w < 4; ++w) EXPECT_EQ(device_ops(halving, w), device_ops(doubling, w));
  // Same work per worker as doubling with m = 4 full micro-batches: 4 x (F + B).
  const SimResult r = simulate(halving, costs(1000, 2000));
  for (const DeviceStats& d : r.devices) EXPECT_EQ(d.busy, 4 * (1000 + 2000));
}

TEST(Chimera, TwoFPipelinesReplayTheOfficialGenerator) {
  // D = 8, f = 2 (Fig. 8): AutoGeneratePipelineRank(8, 4, 8) worker 0, replayed by hand:
  // down 0 (ids 0,1, stage 0), up 1 (ids 6,7, stage 3), down 1 (ids 2,3, stage 4),
  // up 0 (ids 4,5, stage 7). Syncs fill the first empty slot after a replica's last B
  // (slot 16 for up 0), the rest follow the last op in the order their B's ended.
  const Schedule s = generate("chimera", params(8, 8, 4));
  EXPECT_EQ(s.placement, (std::vector<std::vector<int>>{{0, 1, 2, 3, 4, 5, 6, 7},
                                                        {4, 5, 6, 7, 0, 1, 2, 3},
                                                        {7, 6, 5, 4, 3, 2, 1, 0},
                                                        {3, 2, 1, 0, 7, 6, 5, 4}}));
  EXPECT_EQ(device_ops(s, 0),
            "0F0 0F1 3:3F6 1:4F2 3:3F7 1:4F3 2:7F4 2:7B4 2:7F5 2:7B5 1:4B2 3:3B6 1:4B3 3:3B7 0B0 "
            "2:7GRADSYNC 0B1 1:4GRADSYNC 3:3GRADSYNC 0GRADSYNC 2:7OPT 1:4OPT 3:3OPT 0OPT");
}

// ---- bubble ratios (Table 2, Table 3, pitfalls 2-3) ------------------------------------

TEST(Chimera, BasicUnitAndDirectBubbleRatioWithEqualTimes) {
  // (D-2)/(2N+D-2), i.e. D-2 idle slots per worker, for the basic unit and, with
  // t_F = t_B, for direct concatenation too.
  for (int d : {2, 4, 6, 8, 16})
    for (int units : {1, 2, 3}) {
      const int n = units * d;
      SCOPED_TRACE("D=" + std::to_string(d) + " N=" + std::to_string(n));
      const SimResult r = simulate(generate("chimera", params(d, n)), costs(1000, 1000));
      expect_ratio(r, d - 2, 2 * n + d - 2);
      for (const DeviceStats& dev : r.devices) EXPECT_EQ(r.makespan - dev.busy, (d - 2) * 1000);
    }
}

TEST(Chimera, DoublingKeepsTheRatioForBackwardUpToTwiceForward) {
  // Pitfall 2 [derived]: doubling keeps (D-2)/(2N+D-2) for t_F <= t_B <= 2 t_F (idle
  // (D-2)(t_F+t_B)/2 per worker), for every number of doubled units.
  for (int d : {4, 6, 8, 16})
    for (int n : {2 * d, 4 * d, 6 * d})
      for (Tick b : {1000, 1500, 2000}) {
        SCOPED_TRACE("D=" + std::to_string(d) + " N=" + std::to_string(n) + " t_B=" + std::to_string(b));
        const SimResult r = simulate(generate("chimera", params(d, n, 2, "doubling")), costs(1000, b));
        expect_ratio(r, d - 2, 2 * n + d - 2);
        for (const DeviceStats& dev : r.devices) EXPECT_EQ(2 * (r.makespan - dev.busy), (d - 2) * (1000 + b));
      }
  // Not "for any t_B/t_F" as the spec says: outside [1, 2] with two or more doubled units
  // the ratio is larger (D = 4, N = 16: 3/35 for t_B = 3 t_F, 1/9 for t_B = t_F/2).
  expect_ratio(simulate(generate("chimera", params(4, 16, 2, "doubling")), costs(1000, 3000)), 3, 35);
  expect_ratio(simulate(generate("chimera", params(4, 16, 2, "doubling")), costs(2000, 1000)), 1, 9);
}

TEST(Chimera, BackwardTwiceForwardBreaksBasicAndDirectButNotDoubling) {
  // Pitfall 2 and Fig. 7(b): with t_B = 2 t_F the basic unit and direct concatenation idle
  // more than (D-2)/(2N+D-2), and direct concatenation has intermediate bubbles: each
  // extra unit adds idle time, so its makespan exceeds doubling's for the same N.
  for (int d : {4, 8, 16}) {
    SCOPED_TRACE("D=" + std::to_string(d));
    const Bubble basic = bubble(simulate(generate("chimera", params(d, d)), costs(1000, 2000)));
    EXPECT_GT(basic.idle * (2 * d + d - 2), (d - 2) * basic.span);
    Tick previous_idle = basic.idle;
    for (int n : {2 * d, 4 * d}) {
      const SimResult direct = simulate(generate("chimera", params(d, n)), costs(1000, 2000));
      const SimResult doubling = simulate(generate("chimera", params(d, n, 2, "doubling")), costs(1000, 2000));
      EXPECT_GT(direct.makespan, doubling.makespan) << "N=" << n;
      EXPECT_GT(bubble(direct).idle, previous_idle) << "N=" << n;
      previous_idle = bubble(direct).idle;
      expect_ratio(doubling, d - 2, 2 * n + d - 2);
    }
  }
}

TEST(Chimera, Table3BubbleRatioWithTwoFPipelines) {
  // (D-2f)/(2fN+D-2f) exactly: D/f - 2 idle slots per worker (pitfall 3), also under
  // direct concatenation and with data-parallel width.
  for (const auto& [d, f] : std::vector<std::pair<int, int>>{{8, 2}, {8, 4}, {12, 3}, {16, 2}, {16, 4}, {16, 8}})
    for (int units : {1, 2, 3})
      for (int width : {1, 2}) {
        const int n = units * d;
        SCOPED_TRACE("D=" + std::to_string(d) + " f=" + std::to_string(f) + " N=" + std::to_string(n) +
                     " W=" + std::to_string(width));
        const SimResult r = simulate(generate("chimera", params(d, n, 2 * f, "direct", width)), costs(1000, 1000));
        ASSERT_EQ(r.devices.size(), static_cast<std::size_t>(width * d));
        expect_ratio(r, d - 2 * f, 2 * f * n + d - 2 * f);
        for (const DeviceStats& dev : r.devices) EXPECT_EQ(r.makespan - dev.busy, (d / f - 2) * 1000);
      }
}

TEST(Chimera, HalvingRatioCountsHalfMicrobatches) {
  // Halving = doubling on 2m half micro-batches costing (t_F/2, t_B/2), so its ratio is
  // (D-2)/(2*2m+D-2) for t_F <= t_B <= 2 t_F.
  for (int d : {4, 8})
    for (int m : {d, 2 * d})
      for (Tick b : {1000, 2000}) {
        SCOPED_TRACE("D=" + std::to_string(d) + " m=" + std::to_string(m) + " t_B=" + std::to_string(b));
        const SimResult r = simulate(generate("chimera", params(d, m, 2, "halving")), costs(1000, b));
        expect_ratio(r, d - 2, 4 * m + d - 2);
      }
}

// ---- memory ------------------------------------------------------------------------------

TEST(Chimera, ActivationsSpanTable2AndTable3Ranges) {
  // Peak in-flight micro-batches per worker lie in [D - D/(2f) + 1, D] (f = 1: [D/2+1, D]),
  // and both ends are reached.
  for (int d : {2, 4, 6, 8, 16})
    for (int f = 1; f <= d / 2; ++f) {
      if ((d / 2) % f != 0) continue;
      for (int units : {1, 2}) {
        SCOPED_TRACE("D=" + std::to_string(d) + " f=" + std::to_string(f) + " units=" + std::to_string(units));
        const SimResult r = simulate(generate("chimera", params(d, units * d, 2 * f)), costs(1000, 1000));
        int lo = d, hi = 0;
        for (const DeviceStats& dev : r.devices) {
          lo = std::min(lo, dev.peak_activations);
          hi = std::max(hi, dev.peak_activations);
        }
        EXPECT_EQ(lo, d - d / (2 * f) + 1);
        EXPECT_EQ(hi, d);
      }
    }
}

TEST(Chimera, DoublingDoublesActivationMemoryAndHalvingDoesNot) {
  // Spec §7.4: doubling holds up to 2D micro-batches (hence recomputation in the paper);
  // halving holds as many half-size ones, i.e. the non-doubled D x M_a.
  UniformCostConfig cfg;
  cfg.stage = StageCosts{1000, 2000, 0};
  cfg.activation_bytes = 1000;
  const UniformCostModel model(cfg);
  for (int d : {4, 8}) {
    auto peak_bytes = [&](const char* concat) {
      const SimResult r = simulate(generate("chimera", params(d, 2 * d, 2, concat)), model);
      std::int64_t peak = 0;
      for (const DeviceStats& dev : r.devices) peak = std::max(peak, dev.peak_activation_bytes);
      return peak;
    };
    EXPECT_EQ(peak_bytes("direct"), d * 1000) << "D=" << d;
    EXPECT_EQ(peak_bytes("doubling"), 2 * d * 1000) << "D=" << d;
    EXPECT_EQ(peak_bytes("halving"), d * 1000) << "D=" << d;
  }
}

TEST(Chimera, EachWorkerHoldsTwoFReplicas) {
  for (int f : {1, 2, 4}) {
    const Schedule s = generate("chimera", params(8, 8, 2 * f, "direct", 2, 2));
    const SimResult r = simulate(s, costs(1000, 1000));
    for (int d = 0; d < s.num_devices; ++d) {
      EXPECT_EQ(static_cast<int>(s.replicas_on(d).size()), 2 * f) << "device " << d;
      EXPECT_EQ(r.devices[static_cast<std::size_t>(d)].peak_weight_versions, 2 * f) << "device " << d;
    }
  }
}

// ---- weights: synchronous, so no staleness ----------------------------------------------

TEST(Chimera, EveryOpOfIterationTUsesVersionT) {
  for (const char* concat : {"direct", "doubling", "halving"})
    for (int width : {1, 2}) {
      const Schedule s = generate("chimera", params(4, 8, 2, concat, width, 3));
      TimelineRecorder rec;
      const SimResult r = simulate(s, costs(1000, 2000), &rec);
      for (const OpRecord& op : rec.timeline.ops) {
        if (!is_microbatch_op(op.op.kind)) continue;
        EXPECT_EQ(op.weight_version, s.iteration_of(op.op.microbatch)) << to_string(op.op);
      }
      ASSERT_EQ(r.staleness.size(), 4u);
      for (const StageStaleness& st : r.staleness) {
        EXPECT_EQ(st.backwards, 3LL * s.microbatches) << concat;  // every id passes every stage once
        EXPECT_EQ(st.gradients, st.backwards);
        EXPECT_EQ(st.mismatched, 0);
        EXPECT_EQ(st.max_mismatch, 0);
        EXPECT_EQ(st.delay_sum, 0);
        EXPECT_EQ(st.max_delay, 0);
      }
      ASSERT_EQ(r.iteration_end.size(), 3u);
      EXPECT_LT(r.iteration_end[0], r.iteration_end[1]);
    }
}

// ---- validity over a grid ------------------------------------------------------------------

TEST(Chimera, GridIsValidCompleteAndDeadlockFree) {
  for (int d : {2, 4, 6, 8, 16})
    for (int f = 1; f <= d / 2; ++f) {
      if ((d / 2) % f != 0) continue;
      for (const char* concat : {"direct", "doubling", "halving"}) {
        if (f > 1 && std::string(concat) != "direct") continue;
        const int step = std::string(concat) == "doubling" ? 2 * d : d;
        for (int n : {step, 2 * step})
          for (int width : {1, 2})
            for (int t : {1, 2, 3}) {
              SCOPED_TRACE("D=" + std::to_string(d) + " f=" + std::to_string(f) + " " + concat + " N=" +
                           std::to_string(n) + " W=" + std::to_string(width) + " T=" + std::to_string(t));
              const Schedule s = generate("chimera", params(d, n, 2 * f, concat, width, t));
              const ValidationReport report = validate(s);
              EXPECT_TRUE(report.ok()) << (report.errors.empty() ? "" : report.errors.front());
              // Every micro-batch id of the run passes every stage once, forward and back.
              const int ops_per_worker = std::string(concat) == "halving" ? 2 * n : n;
              std::set<std::string> seen;
              for (const auto& list : s.ops) {
                EXPECT_EQ(list.size(), static_cast<std::size_t>(t) * (2 * ops_per_worker + 4 * f));
                for (const Op& op : list) seen.insert(to_string(op) + (is_microbatch_op(op.kind) ? "" : "#"));
              }
              EXPECT_EQ(s.microbatches, width * ops_per_worker);
              std::size_t microbatch_ops = 0;
              for (const std::string& x : seen) microbatch_ops += x.back() != '#';
              EXPECT_EQ(microbatch_ops, static_cast<std::size_t>(2 * d * width * ops_per_worker * t));
              const SimResult r = simulate(s, costs(1000, 2000));
              EXPECT_GT(r.makespan, 0);
            }
      }
    }
}

TEST(Chimera, WidthGivesDistinctIdsAndDisjointDevices) {
  const Schedule s = generate("chimera", params(4, 8, 2, "direct", 2));
  EXPECT_EQ(s.num_devices, 8);
  EXPECT_EQ(s.num_pipelines, 4);
  EXPECT_EQ(s.microbatches, 16);
  EXPECT_EQ(s.placement[2], (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(s.placement[3], (std::vector<int>{7, 6, 5, 4}));
  // Group 1 runs group 0's order with ids shifted by N.
  EXPECT_EQ(device_ops(s, 4, true), "2:0F8 2:0F9 3:3F12 3:3B12 3:3F13 3:3B13 2:0B8 2:0F10 2:0B9 2:0F11 3:3F14 "
                                    "3:3B14 3:3F15 3:3B15 2:0B10 2:0B11");
}

// ---- parameter errors ----------------------------------------------------------------------

TEST(Chimera, ParameterErrors) {
  EXPECT_THAT(error_of(params(5, 10)), HasSubstr("p (5) must be even"));
  EXPECT_THAT(error_of(params(4, 6)), HasSubstr("m (6) must be a multiple of p (4)"));
  EXPECT_THAT(error_of(params(4, 4, 2, "doubling")), HasSubstr("m (4) must be a multiple of 2p = 8"));
  EXPECT_THAT(error_of(params(4, 6, 2, "halving")), HasSubstr("m (6) must be a multiple of p (4)"));
  EXPECT_THAT(error_of(params(8, 8, 6)), HasSubstr("f = 3 must divide p/2 = 4"));
  EXPECT_THAT(error_of(params(8, 8, 3)), HasSubstr("pipelines (3) must be even"));
  EXPECT_THAT(error_of(params(4, 8, 2, "tripling")), HasSubstr("concat must be direct, doubling or halving, got 'tripling'"));
  EXPECT_THAT(error_of(params(8, 16, 4, "doubling")), HasSubstr("defined for 2 pipelines only"));
  EXPECT_THAT(error_of(params(4, 4, 2, "direct", 0)), HasSubstr("width must be a positive integer"));
  EXPECT_THAT(error_of(params(0, 4)), HasSubstr("p must be a positive integer"));
  EXPECT_THAT(error_of(params(4, 4, 2, "direct", 1, 0)), HasSubstr("iterations must be a positive integer"));
  EXPECT_EQ(error_of(params(4, 4, 2, "halving")), "");
}

}  // namespace
}  // namespace pipesim
